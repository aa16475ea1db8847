"""The console's proof page shows a principal a recorded proof only as its own ``sentinel_why_not`` would: a
proof that may rest on facts withheld from it (read from personal data it has no consent for,
``bk__get_booking`` is "bookings", or by a tool outside its reach) is withheld, in why_not's words; the owner,
a full-reach principal and a limited one alike, and a consent given shows it whole on both."""

from __future__ import annotations

import asyncio
import html
import json
import re

import pytest
from tests.console.console_rig import (
    BOB,
    OWNER_TOKEN,
    answer_rounds,
    console_config,
    console_secret,
    grant_consent,
    http_sentinel,
    mcp_client,
    signed_in,
)
from tests.identity.identity_rig import text

pytestmark = pytest.mark.timeout(300)
DAVE = "dave-token-0123456789abcdef00"  # may merge and ask why; reaches no read of a booking
MERGE = {"first": "BK-789", "second": "BK-456"}  # its guard reads both bookings' status (bk__get_booking)
READ_VALUES = re.compile(r"booking_status\(|'BK-789',confirmed|pending")


def _config(tmp_path):
    cfg = console_config(tmp_path, hold_when="always")
    body = json.loads(cfg.read_text())
    body["sentinel"]["principals"].append(
        {"name": "dave", "token": DAVE, "console_secret": console_secret(DAVE),
         "tools": ["bk__merge_bookings", "sentinel__sentinel_why_not"]}
    )
    cfg.write_text(json.dumps(body))
    return cfg


async def _merged(base: str, token: str) -> tuple[dict, str]:
    """An allowed merge (the person answers in the console), what why_not says of it in the same
    conversation, and the proof page of the call."""
    async with signed_in(base, token) as who, mcp_client(base, token) as c:
        done = await answer_rounds(who, asyncio.create_task(c.call_tool("bk__merge_bookings", MERGE)))
        assert not done.is_error, text(done)
        why = await c.call_tool(
            "sentinel__sentinel_why_not", {"tool": "bk__merge_bookings", "arguments": MERGE}
        )
        assert not why.is_error, text(why)
        acts = await who.page("/console/activity?tool=bk__merge_bookings&decision=allow")
        newest = re.findall(r'href="/console/activity/([^"/?]+)"', acts)[0]
        page = html.unescape(await who.page(f"/console/activity/{newest}"))
    return json.loads(text(why))["proof"], page[page.index("<h2>Proof") :]


async def test_a_proof_is_shown_as_the_principals_own_why_not_shows_it(tmp_path):
    cfg = _config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        # without consent (the owner and bob reach everything), or out of reach (dave): withheld on both
        for token in (OWNER_TOKEN, BOB, DAVE):
            why, page = await _merged(base, token)
            assert set(why) == {"withheld"}, why
            assert 'id="proof-withheld"' in page and why["withheld"] in page, page
            assert 'id="proof-tree"' not in page and not READ_VALUES.search(page), page
        # a consent lifts it for bob, on both; dave's reach still withholds it, on both
        grant_consent(cfg, "bob", "bookings")
        grant_consent(cfg, "dave", "bookings")
        why, page = await _merged(base, BOB)
        assert "withheld" not in why and "booking_status('BK-789',confirmed)" in json.dumps(why), why
        assert 'id="proof-tree"' in page and "booking_status('BK-789',confirmed)" in page, page
        assert "proof-withheld" not in page
        why, page = await _merged(base, DAVE)
        assert set(why) == {"withheld"} and 'id="proof-withheld"' in page and not READ_VALUES.search(page)
