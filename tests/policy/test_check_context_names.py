"""``check`` of ``context_value(Name, V)`` against the contexts the rulebase declares, across its files: a
rulebase split over files (as the gateway loads them, and as shared versions carry them) declares a context in
one and reads it in another, which is no problem; a name no file declares is one (a typo: the context is never
bound, the goal never holds, and the guard quietly denies or the rule is dead) and ``check`` said nothing."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

pytestmark = pytest.mark.timeout(60)

DECLARES = (
    "fact(user_booking/2).\nfact(current_user/1).\n"
    "context(booking_of_interest, B, (current_user(U), user_booking(U, B))).\ncontext(plain).\n"
)


_problems = partial(checked_lines, shown="full")


@pytest.mark.parametrize(
    "use",
    [
        "guard('x__a', [], (context_value(booking_of_interest, B), user_booking(_, B))).\n",
        "guard('x__a', [], (context_value(plain, B), user_booking(_, B))).\n",
        "guard('x__a', [], require(context_value(plain, _), 'a booking in focus')).\n",
        "ok(B) :- context_value(plain, B).\nguard('x__a', [], (ok(B), user_booking(_, B))).\n",
        "guard('x__a', [], (context_value(N, B), user_booking(N, B))).\n",  # a name chosen by a fact
    ],
)
async def test_a_context_declared_in_another_file_is_no_problem(tmp_path: Path, use: str) -> None:
    for order in ((DECLARES, use), (use, DECLARES)):
        assert await _problems(tmp_path, *order) == [], order


@pytest.mark.parametrize(
    "use",
    [
        "guard('x__a', [], (context_value(booking_of_intrest, B), user_booking(_, B))).\n",
        "guard('x__a', [], require(context_value(nope, _), 'a booking in focus')).\n",
        "ok(B) :- context_value(nope, B).\nguard('x__a', [], (ok(B), user_booking(_, B))).\n",
        "guard('x__a', [], \\+ context_value('Plain', _)).\n",
        "guard('x__a', [], findall(B, context_value(nope, B), [_])).\n",
    ],
)
async def test_a_context_no_file_declares_is_an_error(tmp_path: Path, use: str) -> None:
    for order in ((DECLARES, use), (use, DECLARES)):
        problems = await _problems(tmp_path, *order)
        mine = [p for p in problems if "no context/1 or context/3" in p]
        assert len(mine) == 1 and ": error: " in mine[0], (order, problems)
        assert "part0.pl" in mine[0] if order[0] == use else "part1.pl" in mine[0], mine
