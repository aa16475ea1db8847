"""``check`` of a case analysis split across clauses where a clause cuts before its last goal: Prolog runs
such a clause as an if-then-else (its head and the goals before the cut the condition; the clauses after it
tried only where that fails), and the checker reads it so (probed_cases.pl, rule_cases/4). ``ok(X) :- X ==
a, !, X == a. ok(X) :- X \\== a.`` holds for every value; ``ok(X) :- X == a, !, fail. ok(_).`` holds for
every value but ``a``, and is not told."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.test_check_clause_set_cases import ALWAYS, LINE, _guard, _problems

pytestmark = pytest.mark.timeout(120)

COMMITTED_COVERING = [
    ("ok(A)", "ok(X) :- X == a, !, X == a.\nok(X) :- X \\== a.\n"),
    ("ok(A)", "ok(X) :- X == a, !, true, X \\== b.\nok(X) :- X \\== a.\n"),
    ("ok(A)", "ok(X) :- X \\== a, !, X \\== a.\nok(a).\n"),
    ("ok(A)", "ok(X) :- X == a, !, \\+ X == b.\nok(_).\n"),
    ("ok(A)", "ok(X) :- X @< m, !, X @< n.\nok(X) :- X @>= m, !, true.\n"),
    ("ok(A)", "ok(X) :- X == a, !, X == a, !, true.\nok(X) :- X \\== a.\n"),
    ("( ok(A) ; A == b )", "ok(X) :- X == a, !.\nok(X) :- X \\== a, X \\== b.\n"),
    ("( ok(A) ; A == b )", "ok(X) :- X == a, !, true.\nok(X) :- X \\== a, X \\== b.\n"),
    ("( A == b ; ok(A) )", "ok(a) :- !, true.\nok(X) :- X \\== b.\n"),
    ("\\+ \\+ ok(A)", "ok(X) :- X == a, !, X == a.\nok(X) :- X \\== a.\n"),
]


@pytest.mark.parametrize(("goal", "rules"), COMMITTED_COVERING)
async def test_a_case_analysis_through_a_clause_that_commits_is_warned_about(
    tmp_path: Path, goal: str, rules: str
) -> None:
    problems = await _problems(tmp_path, _guard(goal) + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


COMMITTED_TESTS = [
    ("ok(A)", "ok(X) :- X == a, !, X \\== a.\nok(_).\n"),  # a: the cut commits to a failing goal
    ("ok(A)", "ok(X) :- X == a, !, fail.\nok(X) :- X \\== a.\nok(a).\n"),  # ok(a) never reached
    ("ok(A)", "ok(X) :- X \\== a, !, X == b.\nok(_).\n"),  # c: committed, fails
    ("ok(A)", "ok(X) :- X @< m, !, X @> n.\nok(_).\n"),
    ("ok(A)", "ok(X) :- X == a, !, blocked(X).\nok(_).\n"),
    ("ok(A)", "ok(X) :- X == a, !, true, !, fail.\nok(_).\n"),
    ("( ok(A) ; A == b )", "ok(X) :- X == a, !, fail.\nok(_).\n"),
    ("( ok(A), A \\== c )", "ok(X) :- X \\== c, !.\nok(_).\n"),  # c: ok(c) holds, the test fails
    # a cut from inside a disjunction
    ("ok(A)", "ok(X) :- ( X == a, ! ; true ), fail.\nok(X) :- X \\== a.\n"),
]


@pytest.mark.parametrize(("goal", "rules"), COMMITTED_TESTS)
async def test_a_clause_whose_cut_makes_the_rule_a_test_is_not_warned_about(
    tmp_path: Path, goal: str, rules: str
) -> None:
    problems = await _problems(tmp_path, _guard(goal) + rules)
    assert not any(ALWAYS in p for p in problems), problems
