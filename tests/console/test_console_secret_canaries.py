"""Canary sweep of the console (secret values never leave): a call with a secret argument (a password, by
its name) is held for the person, then approved; the person and the owner sign in with their console
secrets and every console page they can reach is fetched (each link under /console/ followed from the home
page, breadth first, before and after the answer: the inbox, its cards, activity, history, sessions, policy,
system pages, and any JSON among them), with each response's headers. No page holds the password, a bearer
token or a console secret. Real Sentinel over HTTP, real upstream."""

from __future__ import annotations

import html
import re
import uuid

import pytest
from tests.console.console_rig import ALICE, OWNER_TOKEN, answer_fields, console_secret, http_sentinel, \
    items_of, mcp_client, signed_in
from tests.console.test_console_a2a_secret_arguments import secret_config

pytestmark = pytest.mark.timeout(300)
LINK = re.compile(r'(?:href|action)="(/console/[^"#]*)"')
SKIP = ("/console/static/", "/console/events")  # files as shipped; a live count of waiting items
MAX_PAGES = 150  # per person and round: the crawl is bounded by count


async def _crawl(person, pages: dict[str, str], who: str) -> int:  # noqa: ANN001 - the rig's Browser
    """Every GET page under /console/ reachable from the home page and the inbox, into ``pages`` (by who
    fetched it, when, and its path)."""
    seen: set[str] = set()
    todo = ["/console/", "/console/inbox"]
    fetched = 0
    while todo and fetched < MAX_PAGES:
        path = todo.pop(0)
        if path in seen or path.startswith(SKIP):
            continue
        seen.add(path)
        r = await person.get(path)
        fetched += 1
        pages[f"{who}: {path}"] = f"{r.status_code} {dict(r.headers)}\n{r.text}"
        if r.status_code == 200 and "html" in r.headers.get("content-type", ""):
            todo += [html.unescape(p) for p in LINK.findall(r.text)]
    return fetched


def _leaks(pages: dict[str, str], canaries: list[str]) -> dict[str, list[str]]:
    return {path: [c for c in canaries if c in text] for path, text in pages.items()
            if any(c in text for c in canaries)}


async def test_no_console_page_holds_a_secret(tmp_path) -> None:
    cfg = secret_config(tmp_path)
    password = f"Canary-Pw-{uuid.uuid4().hex[:12]}"
    canaries = [password, password[10:], ALICE, OWNER_TOKEN, console_secret(ALICE),
                console_secret(OWNER_TOKEN)]
    pages: dict[str, str] = {}
    counts: list[int] = []
    with http_sentinel(cfg) as (base, _proc):
        async with mcp_client(base, ALICE) as c, signed_in(base, ALICE) as person, \
                signed_in(base, OWNER_TOKEN) as owner:
            args = {"account": "bank-account", "password": password}
            first = await c.call_tool("sv__set_password", args)  # no elicitation: waits in the inbox
            assert first.is_error, first
            held = await person.wait_items(1)
            assert "set_password" in held, held[:2000]
            for name, who in (("alice", person), ("owner", owner)):  # while the call waits for the person
                counts.append(await _crawl(who, pages, f"{name}, held"))
            for item in items_of(held):
                answer = {"decision": "approve", **answer_fields(held, item)}
                await person.post(f"/console/inbox/{item}", answer)
            result = await c.call_tool("sv__set_password", args)  # the retry the answer allows
            assert not result.is_error and "set (" in result.content[0].text, result
            for name, who in (("alice", person), ("owner", owner)):  # once it ran: its records, activity
                counts.append(await _crawl(who, pages, f"{name}, after"))
    assert min(counts) >= 5, counts  # the crawl reached pages beyond the inbox
    assert any("bank-account" in text for text in pages.values())  # the call is shown ...
    assert _leaks(pages, canaries) == {}, _leaks(pages, canaries)  # ... never its secret
