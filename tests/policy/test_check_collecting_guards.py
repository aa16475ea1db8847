"""``check`` of a guard that holds whatever its inner goal finds: findall/3,4, aggregate_all/3 (count, sum,
bag, set) and forall/2 hold when their goal has no solution (an empty list, 0, a condition nothing meets). The
walk took each as a conjunction of its parts, so a hostile draft's ``guard('shop__delete_account', [],
findall(x, blocked(y), _))`` or ``forall(fail, ...)`` lets the deletion through on nothing and ``check`` (and
so a draft's own check) found it clean."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.policy.test_check_unconditional_guards import UNCONDITIONAL, _problems

pytestmark = pytest.mark.timeout(60)

D = "guard('shop__delete_account', [], {}).\n"


@pytest.mark.parametrize(
    "goal",
    [
        "findall(x, blocked(y), _)",
        "findall(x, confirmed('Delete?', []), _)",  # the confirmation is collected, never needed
        "(findall(x, blocked(y), L), L == [])",
        "findall(x, blocked(y), [])",
        "findall(x, blocked(y), L, [])",
        "(findall(x, blocked(y), L), length(L, N), N >= 0)",
        "aggregate_all(count, blocked(_), _)",
        "(aggregate_all(count, blocked(_), N), N =:= 0)",
        "aggregate_all(sum(X), blocked(X), 0)",
        "aggregate_all(bag(X), blocked(X), _)",
        "aggregate_all(set(X), blocked(X), [])",
        "forall(fail, blocked(x))",
        "forall(blocked(x), fail)",
        "forall(blocked(X), X == never)",
        "forall(confirmed('Delete?', []), true)",
    ],
)
async def test_a_collection_of_nothing_is_warned_about(tmp_path: Path, goal: str) -> None:
    problems = await _problems(tmp_path, D.format(goal))
    assert any(p.startswith("warning 3 ") and UNCONDITIONAL in p for p in problems), problems


@pytest.mark.parametrize(
    "goal",
    [
        "(findall(x, blocked(y), L), L = [_|_])",  # someone must be blocked
        "findall(x, blocked(y), [x])",
        "(aggregate_all(count, blocked(_), N), N > 0)",
        "aggregate_all(max(X), blocked(X), _)",  # no maximum of nothing
        "(findall(x, blocked(y), L), L \\== [])",
        "forall(true, blocked(x))",
        "forall(member(X, [a]), blocked(X))",
        "forall(true, confirmed('Delete?', []))",
    ],
)
async def test_a_collection_that_must_find_something_is_not(tmp_path: Path, goal: str) -> None:
    problems = await _problems(tmp_path, D.format(goal))
    assert not any("through on nothing" in p for p in problems), problems
