"""The console's session and proof pages show a principal what its own ``sentinel_facts`` shows, no more:
facts the guard read from personal data the principal has no consent for (``bk__get_booking`` is personal,
"bookings"), or from tools outside its reach, stay out of the listing, its filter, the count on the sessions
list, the proof page's live facts, and what it may revoke (a revoke of one answers as for a fact that is not
there, so the form cannot be used to test whether it is)."""

from __future__ import annotations

import html
import json
import re

import pytest
from tests.console.console_rig import (
    BOB, console_config, console_secret, http_sentinel, mcp_client, signed_in,
)
from tests.identity.identity_rig import session_line, text

pytestmark = pytest.mark.timeout(180)
DAVE = "dave-token-0123456789abcdef00"  # may cancel, and read its own facts; not list or read bookings
WITHHELD = re.compile(r"(?:booking_status|booking_cabin|booking_window|user_booking)\(")


def _config(tmp_path):
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["principals"].append(
        {"name": "dave", "token": DAVE, "console_secret": console_secret(DAVE),
         "tools": ["bk__cancel_booking", "sentinel__sentinel_facts"]}
    )
    cfg.write_text(json.dumps(body))
    return cfg


async def _denied_cancel(base: str, token: str) -> tuple[str, str]:
    """A cancel the guard decides on what it reads (BK-456 is pending: denied); the caller's session and what
    its own sentinel_facts shows."""
    async with mcp_client(base, token) as c:
        denied = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-456"})
        assert denied.is_error and "only confirmed bookings" in text(denied), text(denied)
        facts = await c.call_tool("sentinel__sentinel_facts", {})
    return session_line(facts), text(facts)


async def test_the_console_withholds_what_the_principals_own_facts_tool_withholds(tmp_path):
    with http_sentinel(_config(tmp_path)) as (base, _):
        # bob may list bookings (his user_booking facts are his) but has no consent to read one; dave reaches
        # neither read
        # (markers: the bookkeeping facts the count includes, one per read the caller may see: bob's list)
        for token, never, markers in (
            (BOB, re.compile(r"booking_(?:status|cabin|window)\("), 1),
            (DAVE, WITHHELD, 0),
        ):
            hidden = "booking_cabin('BK-456',business)"
            sid, own = await _denied_cancel(base, token)
            assert not never.search(own), own
            async with signed_in(base, token) as who:
                listing = await who.page("/console/sessions")
                page = html.unescape(await who.page(f"/console/sessions/{sid}"))
                assert sid in html.unescape(listing) and not never.search(page), page
                for q in ("booking", "cabin", "BK-456", "business", "pending", "u_123"):
                    found = html.unescape(await who.page(f"/console/sessions/{sid}?q={q}"))
                    assert not never.search(found), q
                # the count on the list is what the page shows and its bookkeeping, nothing withheld
                count = re.search(rf"{re.escape(sid)}</code></a> · (\d+) fact", html.unescape(listing))
                shown = len(re.findall(r'name="fact" value="', page))
                assert count is not None and int(count.group(1)) == shown + markers, (count, shown)
                # a withheld fact's revoke answers as a missing one's; the fact stays for the guard
                for fact in (hidden, "booking_status('BK-456',pending)", "booking_status('BK-456',nope)"):
                    r = await who.post(f"/console/sessions/{sid}/revoke", {"fact": fact})
                    assert r.status_code == 404 and "not in this session" in r.text, (fact, r.status_code)
                # its call's proof page shows no live fact it may not see
                acts = await who.page("/console/activity?tool=bk__cancel_booking")
                for row in re.findall(r'href="/console/activity/([^"/?]+)"', acts):
                    proof = html.unescape(await who.page(f"/console/activity/{row}"))
                    assert "booking_cabin(" not in proof, row
