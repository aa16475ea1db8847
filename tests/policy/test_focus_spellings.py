"""The booking in focus is the one the check names, spelled as the upstream spells it, in this conversation.

``sentinel_bind`` binds ``booking_of_interest`` only when its check proves (the booking is in the current
user's list, as the bookings tool writes its ids). A value spelled otherwise (case, spaces, invisible or
look-alike characters, other digits, a number, a list, an object, the quotes around it, the context's own
name) is another value, which the check does not prove: the upstream may read it as the user's booking, or
as another user's, and the guard would act on what it never checked. A focus bound in one conversation names
nothing in another. (These held when written: they guard against a check or a binding that normalises
values.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.core.decision import Allow, Deny
from sentinel_mcp.policy.policy_service import PolicyService
from tests.policy.policy_rig import BOOKINGS_PL, rig

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio]
# the booking in focus, compared with the call's argument (a guard that acts on the focus alone)
FOCUS_GUARD = """
guard('bk__merge_bookings', [first = A, second = B], (context_value(booking_of_interest, A), A == B)).
"""
OTHER_SPELLINGS = [
    "bk-789", " BK-789", "BK-789 ", "BK-789\n", "BK-789\u200b", "\u200bBK-789", "\uff22\uff2b-789",
    "BK\u2011789",
    "BK-\u0667\u0668\u0669", "BK-789\x00", "'BK-789'", '"BK-789"', "BK-111", "booking_of_interest",
    789, ["BK-789"], {"id": "BK-789"}, True,
]


def _rules(d: Path) -> list[Path]:
    rules = BOOKINGS_PL.read_text().replace("guard('bk__merge_bookings'", "unused_guard('bk__merge_bookings'")
    (d / "focus.pl").write_text(rules + FOCUS_GUARD)
    return [d / "focus.pl"]


async def test_only_the_checked_spelling_binds(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db", files=_rules(tmp_path)) as bound:
        await _only_the_checked_spelling_binds(bound)


async def _only_the_checked_spelling_binds(bound: Any) -> None:
    svc = PolicyService(bound.guard)
    bound_to = {}
    for i, value in enumerate(OTHER_SPELLINGS):  # one rig for all: each in a conversation of its own
        session = f"spelling-{i}"
        try:
            await svc.bind(session, "booking_of_interest", value)
        except ValueError as e:
            assert "its check does not hold" in str(e), (value, e)
        if "booking_of_interest" in (ctx := await bound.guard.store.contexts(session)):
            bound_to[repr(value)] = ctx["booking_of_interest"]
    assert bound_to == {}
    assert (await svc.bind("spelling-ok", "booking_of_interest", "BK-789"))["value"] == "BK-789"


async def test_a_focus_is_its_conversations_alone(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db", files=_rules(tmp_path)) as bound:
        await _a_focus_is_its_conversations_alone(bound)


async def _a_focus_is_its_conversations_alone(bound: Any) -> None:
    svc = PolicyService(bound.guard)
    out = await svc.bind("focused", "booking_of_interest", "BK-789")
    assert out["value"] == "BK-789"
    args = {"first": "BK-789", "second": "BK-789"}
    here = await bound.guard.decide(bound.port.call_of("bk__merge_bookings", args, session_id="focused"))
    there = await bound.guard.decide(bound.port.call_of("bk__merge_bookings", args, session_id="elsewhere"))
    assert isinstance(here, Allow), here
    assert isinstance(there, Deny), there
