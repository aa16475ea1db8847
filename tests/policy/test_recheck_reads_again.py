"""``PolicyGuard.recheck``: a call about to be carried out on an earlier decision (the continuation of a call
whose upstream asked for input, ``gateway/decide_step.py``) is decided again as a preview (nothing asked,
nothing spent) on what a write can change read again (``fresh_for_writes``), as a decision reads it: a
booking another conversation cancelled meanwhile is seen cancelled, where a preview still reads the
conversation's earlier fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny
from tests.policy.policy_rig import BOOKINGS_PL, rig

pytestmark = pytest.mark.timeout(60)


async def test_a_recheck_reads_what_a_write_can_change_again(tmp_path: Path) -> None:
    rules = tmp_path / "fresh.pl"
    text = BOOKINGS_PL.read_text()
    stale = "extract([S = '/status']), [ttl(60)])."
    assert stale in text
    rules.write_text(text.replace(stale, "extract([S = '/status']), [ttl(60), fresh_for_writes])."))
    async with rig(tmp_path / "facts.db", files=[rules]) as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        for answer in ("health", True):  # the reason, then the confirmation
            d = await r.guard.decide(call)
            assert isinstance(d, Ask), d
            given = Answer(action="accept", content={"answer": answer})
            await r.guard.record_answer(call, d.questions[0], given)
        assert isinstance(await r.guard.preview(call), Allow)
        reads = r.state["calls"].get("get_booking", 0)
        r.state["bookings"]["BK-789"]["status"] = "cancelled"  # another conversation cancelled it
        assert isinstance(await r.guard.preview(call), Allow)  # a look: the conversation's fact, 60 s old
        again = await r.guard.recheck(call)
        assert isinstance(again, Deny) and "only confirmed bookings" in again.reason, again
        assert r.state["calls"]["get_booking"] == reads + 1  # read again, once
        # nothing was spent: with the booking confirmed again, the confirmation given still allows it
        r.state["bookings"]["BK-789"]["status"] = "confirmed"
        assert isinstance(await r.guard.recheck(call), Allow)
