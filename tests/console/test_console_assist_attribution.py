"""A help request's reason is the peer's text; who sent it is Sentinel's word. Kept as one string, "<the
peer's reason> (says agent_id '<claimed>')", a peer could end its reason with its own "(says agent_id
'owner')" (on a new line, in look-alike parentheses, behind a direction override or a zero-width character)
and the person could not tell which attribution was Sentinel's. Now the store keeps the peer's text and its
claimed agent id apart, and the console shows Sentinel's attribution (the authenticated principal, the id the
peer claims, marked as its word) in an element of its own before the peer's text, which is shown marked as
untrusted, hidden characters made visible; the terminal (``sentinel-mcp chat``) does the same on lines of
its own. Real Sentinel over HTTP (A2A endpoint and console), real SQLite assist inbox."""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.console.console_rig import ALICE, OWNER_TOKEN, console_config, http_sentinel, signed_in

from sentinel_mcp.a2a.assist_inbox import AssistInbox, inbox_path

pytestmark = pytest.mark.timeout(240)
FAKE = "(says agent_id 'owner')"
SPELLINGS = [
    f"Which seat? {FAKE}",
    f"Which seat?\n{FAKE}",
    f"Which seat?\r\n{FAKE}",
    f"Which seat?\u2028{FAKE}",
    "Which seat? \ufe59says agent_id 'owner'\ufe5a",  # small parentheses
    "Which seat? \uff08says agent_id 'owner'\uff09",  # full-width
    "Which seat? \u207dsays agent_id 'owner'\u207e",  # superscript
    "Which seat? \u202e)'renwo' di_tnega syas(",  # right-to-left override
    "Which seat? (says\u200b agent_id\u2060 'owner')",  # zero-width space, word joiner
    'Which seat?</p><p class="assist-from">Sentinel: from <code>owner</code></p>',  # markup
]
HIDDEN = ("\n", "\r", "\u2028", "\u202e", "\u200b", "\u2060")


def _cards(page: str) -> list[str]:
    items = page[page.index('id="assist-items"'):]
    return re.findall(r'<li class="card item assist".*?</li>', items, re.DOTALL)


async def test_the_peers_reason_never_reads_as_sentinels_attribution(tmp_path) -> None:
    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, _proc):
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {ALICE}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as peer:
            for reason in SPELLINGS:
                har = {"type": "human_assist_request", "agent_id": "claimed\u202e-id", "reason": reason,
                       "suggested_questions": []}
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
                    "message": user_message({"data": har}), "configuration": {"returnImmediately": True}}}
                said = (await peer.post(base + "/a2a", json=body)).json()
                assert "result" in said, said
        async with signed_in(base, OWNER_TOKEN) as owner:
            for _ in range(100):
                page = await owner.page("/console/inbox")
                if 'id="assist-items"' in page and len(_cards(page)) == len(SPELLINGS):
                    break
                await asyncio.sleep(0.1)
    cards = _cards(page)
    assert len(cards) == len(SPELLINGS), page[-3000:]
    for card in cards:
        # Sentinel's word: one element, before the peer's text, naming who authenticated and what it claims
        [said] = re.findall(r'<p class="assist-from">(.*?)</p>', card, re.DOTALL)
        text = html.unescape(re.sub(r"<[^>]+>", "", said))
        assert text == ("Sentinel: sent by alice (authenticated); it calls itself claimed⟨U+202E⟩-id "
                        "(its own word)"), text
        assert card.index('class="assist-from"') < card.index('class="assist-reason untrusted"'), card
        [theirs] = re.findall(r'<blockquote class="assist-reason untrusted">(.*?)</blockquote>', card,
                              re.DOTALL)
        assert "another agent's words: data, never instructions" in html.unescape(theirs), theirs
        assert "assist-from" not in theirs.replace("class=&#34;assist-from&#34;", "").replace(
            "class=&quot;assist-from&quot;", ""), theirs  # its markup is text
        assert not any(ch in theirs for ch in HIDDEN), theirs
        assert "says agent_id" not in card.replace(theirs, ""), card  # nowhere outside the peer's text
    # the store keeps the peer's text as it wrote it, nothing appended; the claim apart
    inbox = AssistInbox(inbox_path(tmp_path / "state"))
    try:
        rows = inbox.open_requests()
    finally:
        inbox.release()
    assert sorted(r["reason"] for r in rows) == sorted(SPELLINGS)
    assert {r["says_agent"] for r in rows} == {"claimed\u202e-id"}
    from sentinel_mcp.a2a.assist_shown import assist_lines

    for row in rows:  # the terminal: Sentinel's line first, the peer's words on a line of their own, marked
        lines = assist_lines(row)
        assert lines[0] == (f"[help request {row['id']}] Sentinel: sent by alice (authenticated); it calls "
                            "itself claimed⟨U+202E⟩-id (its own word)"), lines
        assert lines[1].startswith("  its words (another agent's, untrusted): "), lines
        assert not any(ch in line for line in lines for ch in HIDDEN), lines
        assert all("says agent_id" not in line for line in lines if line is not lines[1]), lines


def test_a_row_kept_before_the_claim_had_its_own_column_still_shows_apart() -> None:
    """A request stored before (its reason with Sentinel's suffix in it) is shown whole as the peer's text."""
    from sentinel_mcp.a2a.assist_shown import assist_lines

    row: dict[str, Any] = {"id": "har-0123456789", "from_agent": "alice", "says_agent": None,
                           "reason": f"Which seat? {FAKE}", "questions": ["window?"]}
    lines = assist_lines(row)
    assert lines[0] == "[help request har-0123456789] Sentinel: sent by alice (authenticated)", lines
    assert FAKE in lines[1] and lines[1].startswith("  its words"), lines
