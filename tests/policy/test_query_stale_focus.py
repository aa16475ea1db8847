"""A client's symbolic query reads the booking in focus only while the focus's check holds.

``sentinel_query`` replaces a bound context's name by its value. It took the stored binding as proved once:
after a stricter policy (or a changed fact) made the check fail, ``booking_status(booking_of_interest, S)``
was still proved about the booking no longer in focus, while every guard reading the same context
(``context_value/2``, bound_contexts.pl) already proved nothing. A literal value is still the client's to ask
about: only "the booking in focus" is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.policy_service import PolicyService
from tests.policy.policy_rig import make_guard

pytestmark = pytest.mark.timeout(60)
RULES = """
fact(current_user/1).
owner('BK-1', u_123).
owner('BK-2', u_123).
frozen('BK-1').
context(booking_of_interest, B, {check}).
booking_status(B, open) :- owner(B, _).
"""
CHECK = "(current_user(U), owner(B, U))"
STRICTER = "(current_user(U), owner(B, U), \\+ frozen(B))"
GOALS = ("booking_status(booking_of_interest, S)", "owner(booking_of_interest, U)",
         "(booking_status(booking_of_interest, S), S == open)", "\\+ \\+ owner(booking_of_interest, _)")


async def _status(guard: PolicyGuard, goal: str) -> str:
    return (await PolicyService(guard).query("s1", goal)).status


async def test_a_query_through_a_focus_whose_check_fails_proves_nothing(tmp_path: Path) -> None:
    rules = tmp_path / "focus.pl"
    rules.write_text(RULES.format(check=CHECK))
    guard = await make_guard(None, tmp_path / "facts.db", files=[rules])
    try:
        service = PolicyService(guard)
        await service.bind("s1", "booking_of_interest", "BK-1")
        for goal in GOALS:  # while the check holds, the focus counts
            assert await _status(guard, goal) == "proved", goal
        rules.write_text(RULES.format(check=STRICTER))
        assert await guard.rulebases.check_for_changes() is True
        assert await _status(guard, "context_value(booking_of_interest, B)") == "failed"
        for goal in GOALS:
            assert await _status(guard, goal) == "failed", goal
            # the value itself is still the client's to ask about
            assert await _status(guard, goal.replace("booking_of_interest", "'BK-1'")) == "proved", goal
        await service.bind("s1", "booking_of_interest", "BK-2")
        for goal in GOALS:
            assert await _status(guard, goal) == "proved", goal
    finally:
        await guard.close()
