"""``check`` of rules whose clauses cut: the walk that tells a guard lets a destructive tool through on
nothing (unconditional_guards.pl) and the probe of a rule's clauses as one case analysis (probed_cases.pl).

A clause that holds on nothing made its rule hold on nothing even where an earlier clause that takes the goal
cuts it off first (``ok(_) :- !, fail. ok(_).`` never holds, and was warned about); an earlier clause whose
cut is reached only with a fact, or only for arguments the caller need not choose, does not stop it.
A clause whose only cut is its last goal (``ok(a) :- !.``) changes which solutions a call has, never whether
it holds: such a rule is probed as the disjunction of its clauses, and a split case analysis with it is
told. An if-then-else cuts too: one whose condition holds whatever the caller chooses never takes its else."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.policy.test_check_clause_set_cases import ALWAYS, LINE
from tests.policy.test_check_clause_set_cases import _guard
from tests.policy.test_check_clause_set_cases import _problems as _set_problems
from tests.policy.test_check_unconditional_guards import UNCONDITIONAL, _problems

pytestmark = pytest.mark.timeout(120)


def _delete(goal: str, args: str = "[]") -> str:
    return f"guard('shop__delete_account', {args}, ({goal})).\n"


CUT_OFF_FIRST = [
    ("ok(x)", "ok(_) :- !, fail.\nok(_).\n"),
    ("ok(x)", "ok(x) :- !, fail.\nok(_).\n"),
    ("ok(x)", "ok(X) :- X == x, !, fail.\nok(_).\n"),
    ("ok(x)", "ok(X) :- atom(X), !, fail.\nok(_).\n"),
    ("ok(x)", "ok(_) :- true, !, fail.\nok(_).\n"),
    ("ok(x)", "ok(_) :- !, blocked(a).\nok(_).\n"),
    ("ok(x)", "ok(X) :- ( X == x ; X == y ), !, fail.\nok(_) :- \\+ fail.\n"),
    ("ok(x)", "ok(_) :- !, 1 =:= 2.\nok(_) :- true.\nok(_).\n"),
    ("gate", "gate :- ok(x).\nok(_) :- !, fail.\nok(_).\n"),
    ("ok(x, y)", "ok(x, _) :- !, fail.\nok(_, _).\n"),
]


@pytest.mark.parametrize(("goal", "rules"), CUT_OFF_FIRST)
async def test_a_clause_an_earlier_cut_takes_the_goal_from_is_not_taken_to_hold(
    tmp_path: Path, goal: str, rules: str
) -> None:
    problems = await _problems(tmp_path, _delete(goal) + rules)
    assert not any(UNCONDITIONAL in p for p in problems), problems


CUT_NOT_REACHED = [
    ("ok(x)", "[]", "ok(X) :- blocked(X), !, fail.\nok(_).\n"),  # the cut needs a fact
    ("ok(x)", "[]", "ok(_).\nok(x) :- !, fail.\n"),  # holds before the cut
    ("ok(x)", "[]", "ok(y) :- !, fail.\nok(_).\n"),  # its head does not take x
    ("ok(x)", "[]", "ok(X) :- X == y, !, fail.\nok(_).\n"),
    ("ok(U)", "[user = U]", "ok(X) :- X == admin, !, fail.\nok(_).\n"),  # the caller chooses another
    ("ok(x)", "[]", "ok(x) :- !.\nok(_) :- fail.\n"),  # holds at its cut
    ("ok(x)", "[]", "ok(_) :- !, atom(x).\nok(_) :- fail.\n"),
]


@pytest.mark.parametrize(("goal", "args", "rules"), CUT_NOT_REACHED)
async def test_a_clause_no_cut_takes_the_goal_from_is_still_told(
    tmp_path: Path, goal: str, args: str, rules: str
) -> None:
    problems = await _problems(tmp_path, _delete(goal, args) + rules)
    assert any(UNCONDITIONAL in p for p in problems), problems


CUT_LAST_COVERING = [
    "ok(a) :- !.\nok(X) :- X \\== a.\n",
    "ok(X) :- X \\== a.\nok(a) :- !.\n",
    "ok(X) :- X == a, !.\nok(X) :- X \\== a.\n",
    "ok(a) :- !.\nok(b) :- !.\nok(X) :- X \\== a, X \\== b.\n",
    "ok(X) :- X @< m, !.\nok(X) :- X @>= m, !.\n",
    "ok(a) :- true, !.\nok(X) :- X \\== a, !.\n",
]


@pytest.mark.parametrize("rules", CUT_LAST_COVERING)
async def test_a_split_case_analysis_whose_clauses_end_in_a_cut_is_warned_about(
    tmp_path: Path, rules: str
) -> None:
    problems = await _set_problems(tmp_path, _guard("ok(A)") + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


CUT_LAST_TESTS = [
    "ok(a) :- !.\nok(X) :- X \\== b.\n",  # misses b
    "ok(X) :- !, X == a.\nok(X) :- X \\== a.\n",  # the cut first: ok(b) fails
    "ok(a) :- !, fail.\nok(X) :- X \\== a.\n",
    "ok(a) :- !.\nok(X) :- X \\== a, blocked(X).\n",
    "ok(X) :- X == a, !, true.\nok(X) :- X == b.\n",
    "ok(a) :- ( true ; ! ), fail.\nok(X) :- X \\== a.\n",  # a cut inside, not last
    "ok(a) :- !, !.\nok(X) :- X \\== b.\n",
]


@pytest.mark.parametrize("rules", CUT_LAST_TESTS)
async def test_a_rule_with_cuts_that_tests_its_argument_is_not_warned_about(
    tmp_path: Path, rules: str
) -> None:
    problems = await _set_problems(tmp_path, _guard("ok(A)") + rules)
    assert not any(ALWAYS in p for p in problems), problems


def _dispatch(n: int) -> str:
    return "".join(f"ok(tool{i}, X) :- blocked(X).\n" for i in range(n))


@pytest.mark.parametrize(
    "rules",
    [
        _dispatch(12) + "ok(refund, a).\nok(refund, X) :- X \\== a.\n",
        "ok(refund, a).\n" + _dispatch(13) + "ok(refund, X) :- X \\== a, !.\n",
        _dispatch(20) + "ok(refund, X) :- X @< m.\nok(refund, X) :- X @>= m.\n",
    ],
)
async def test_a_case_analysis_among_many_clauses_for_other_goals_is_warned_about(
    tmp_path: Path, rules: str
) -> None:
    """Only the clauses whose head may take the goal are its cases: a rule of many clauses, one set for each
    tool, is read as the few that take ok(refund, A)."""
    problems = await _set_problems(tmp_path, _guard("ok(refund, A)") + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


async def test_many_clauses_taking_the_goal_are_not_told_as_a_tautology_nor_refused(tmp_path: Path) -> None:
    """13 clauses that may take the goal are more than the probes read: the guard is not told (a table of
    allowed values is the common such rule, and never covers every value), and not said unchecked."""
    rules = "".join(f"ok(v{i}).\n" for i in range(14))
    problems = await _set_problems(tmp_path, _guard("ok(A)") + rules)
    assert not any(ALWAYS in p or "could not finish" in p for p in problems), problems


@pytest.mark.parametrize(
    "goal",
    [
        "( true -> blocked(x) ; true )",
        "( 1 =:= 1 -> fail ; true )",
        "( atom(x) -> blocked(x) ; true )",
        "( x == x -> blocked(x) ; \\+ fail )",
        "( true *-> blocked(x) ; true )",
        "( fail ; ( true -> blocked(x) ; true ) )",
    ],
)
async def test_an_else_a_condition_that_always_holds_cuts_off_is_not_taken_to_hold(
    tmp_path: Path, goal: str
) -> None:
    """An if-then-else cuts too: where its condition holds whatever the caller chooses, its else is never
    taken, and the guard needs what its then needs."""
    problems = await _problems(tmp_path, _delete(goal))
    assert not any(UNCONDITIONAL in p for p in problems), problems


@pytest.mark.parametrize(
    ("goal", "args"),
    [
        ("( blocked(x) -> fail ; true )", "[]"),
        ("( U == admin -> blocked(U) ; true )", "[user = U]"),  # the caller chooses another
        ("( fail -> blocked(x) ; true )", "[]"),
        ("( 1 =:= 2 -> blocked(x) ; true )", "[]"),
        ("( true -> true ; blocked(x) )", "[]"),
    ],
)
async def test_an_else_the_condition_may_leave_is_still_told(tmp_path: Path, goal: str, args: str) -> None:
    problems = await _problems(tmp_path, _delete(goal, args))
    assert any(UNCONDITIONAL in p for p in problems), problems


@pytest.mark.parametrize(
    "rules", ["ok(_) :- !, fail.\nok(_).\n", "ok(X) :- atom(x), !, blocked(X).\nok(_).\n"]
)
async def test_a_cut_every_call_reaches_stops_the_caller_too(tmp_path: Path, rules: str) -> None:
    """A head that takes every argument and goals before its cut that hold for each: the caller cannot
    choose an argument that passes it."""
    problems = await _problems(tmp_path, _delete("ok(U)", "[user = U]") + rules)
    assert not any(UNCONDITIONAL in p for p in problems), problems


async def test_a_last_cut_before_a_clause_that_holds_is_told(tmp_path: Path) -> None:
    """ok(a) :- !. ok(_). holds for every value: the cut prunes only after ok(a) held."""
    problems = await _set_problems(tmp_path, _guard("ok(A)") + "ok(a) :- !.\nok(_).\n")
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems
