"""``check`` of a case analysis that covers every value when it is split across the clauses of a rule
(``ok(a). ok(X) :- X \\== a.``: each clause alone tests the argument, the predicate as a whole holds for every
value), and of one over a value read from a fact (``( booking(B, S) -> ( S == x ; S \\== x ) ; true )``).

Decided by the same probes as a guard's own case analysis (probed_cases.pl): the clause set is read as one
disjunction of its clauses (each head's constants a test of the argument), probed once for each place of
the unknowns among the constants. A value a fact gives is some ground term, one of the places the probes
cover, so it is probed as an unknown too. A real test is not told: a rule whose clauses miss a value, a
clause with a cut (the probe does not read cuts), a fact read that the guard needs (``booking(B, S), ( S == x
; S \\== x )`` holds only where a booking is there: not a tautology)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

from sentinel_mcp.policy.draft_check import draft_problems

pytestmark = pytest.mark.timeout(120)

HEAD = "fact(booking/2).\nfact(blocked/1).\n"
LINE = HEAD.count("\n") + 1
ALWAYS = "holds for every call"


_problems = partial(checked_lines, head=HEAD)


def _guard(goal: str, args: str = "[id = A]") -> str:
    return f"guard('shop__delete', {args}, ({goal})).\n"


SPLIT_RULES = [
    "ok(a).\nok(X) :- X \\== a.\n",
    "ok(X) :- X \\== a.\nok(a).\n",
    "ok(a).\nok(b).\nok(X) :- X \\== a, X \\== b.\n",
    "ok(X) :- X == a.\nok(X) :- X \\== a.\n",
    "ok(X) :- X @< m.\nok(m).\nok(X) :- X @> m.\n",
    "ok(X) :- X @=< m.\nok(X) :- X @> m.\n",
    "ok(X) :- X = a.\nok(X) :- X \\= a.\n",
    "ok(X) :- memberchk(X, [a, b]).\nok(X) :- \\+ memberchk(X, [a, b]).\n",
    "ok(X) :- ( X == a -> fail ; true ).\nok(a).\n",
    "ok(1).\nok(X) :- X \\== 1.\n",
    "ok(\"s\").\nok(X) :- X \\== \"s\".\n",
    "ok(a) :- true.\nok(X) :- ( X == b ; X \\== a ).\n",
    "ok(X) :- blocked(x), X == a.\nok(a).\nok(X) :- X \\== a.\n",  # a clause that reads: the others cover all
]


@pytest.mark.parametrize("rules", SPLIT_RULES)
async def test_a_case_analysis_split_across_clauses_is_warned_about(tmp_path: Path, rules: str) -> None:
    problems = await _problems(tmp_path, _guard("ok(A)") + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


TWO_ARGUMENT_RULES = [
    "ok(a, _).\nok(X, _) :- X \\== a.\n",
    "ok(_, b).\nok(_, Y) :- Y \\== b.\n",
    "ok(a, b).\nok(X, _) :- X \\== a.\nok(_, Y) :- Y \\== b.\n",
]


@pytest.mark.parametrize("rules", TWO_ARGUMENT_RULES)
async def test_a_split_case_analysis_over_two_arguments_is_warned_about(tmp_path: Path, rules: str) -> None:
    problems = await _problems(tmp_path, _guard("ok(A, B)", "[id = A, to = B]") + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


SPLIT_TESTS = [
    "ok(a).\nok(b).\n",
    "ok(a).\nok(X) :- X \\== b.\n",  # misses b
    "ok(X) :- X @< m.\nok(X) :- X @> m.\n",  # misses m
    "ok(a).\nok(X) :- X \\== a, blocked(X).\n",
    "ok(a).\nok(X) :- X \\== a, atom_length(X, 3).\n",
    "ok(a) :- !, fail.\nok(X) :- X \\== a.\nok(a).\n",  # a cut: ok(a) fails
    "ok(f(_)).\nok(X) :- X \\== a.\n",  # a compound head: misses a
    "ok(1.0).\nok(X) :- X \\== 1.\n",  # misses 1
    "ok(a).\nok(X) :- X \\== a, helper(X).\nhelper(X) :- X \\== b.\n",  # misses b
    "ok(X) :- X == a.\nok(X) :- blocked(X).\n",
]


@pytest.mark.parametrize("rules", SPLIT_TESTS)
async def test_a_rule_whose_clauses_test_the_argument_is_not_warned_about(tmp_path: Path, rules: str) -> None:
    problems = await _problems(tmp_path, _guard("ok(A)") + rules)
    assert not any(ALWAYS in p for p in problems), problems


async def test_two_arguments_one_rule_relates_are_not_probed_as_a_tautology(tmp_path: Path) -> None:
    rules = "ok(X, X).\nok(X, Y) :- X \\== a, Y \\== a.\n"  # misses (a, b)
    problems = await _problems(tmp_path, _guard("ok(A, B)", "[id = A, to = B]") + rules)
    assert not any(ALWAYS in p for p in problems), problems


FACT_READ_COVERING = [
    "( booking(A, S) -> ( S == x ; S \\== x ) ; true )",
    "( booking(A, S) -> ( S == x -> true ; S \\== x ) ; true )",
    "forall(booking(A, S), ( S == x ; S \\== x ))",
    "forall(booking(A, S), ( S @< m ; S @>= m ))",
    "\\+ ( booking(A, S), S == x, S \\== x )",
    "\\+ ( booking(A, S), \\+ ( S == x ; S \\== x ) )",
    "\\+ ( booking(A, S), S @< m, S @> m )",
    "( booking(A, S) -> ( memberchk(S, [x, y]) ; S \\== x, S \\== y ) ; true )",
    "( booking(A, S) *-> ( S == x ; S \\== x ) ; true )",
]


@pytest.mark.parametrize("goal", FACT_READ_COVERING)
async def test_a_case_analysis_over_a_fact_read_value_is_warned_about(tmp_path: Path, goal: str) -> None:
    problems = await _problems(tmp_path, _guard(goal))
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


FACT_READ_TESTS = [
    "booking(A, S), ( S == x ; S \\== x )",  # holds only where a booking is there
    "( booking(A, S) -> ( S == x ; S == y ) ; true )",
    "forall(booking(A, S), S == x)",
    "forall(booking(A, S), ( S @< m ; S @> m ))",  # misses m
    "\\+ ( booking(A, S), S == x )",
    "\\+ ( booking(A, S), ( S == x ; S \\== y ) )",
    "( booking(A, S) -> ( S == x ; atom(S) ) ; true )",
    "( booking(A, S) -> ( S == x ; blocked(S) ) ; true )",
    "( booking(A, S), ( S == x ; S \\== x ) -> true ; blocked(A) )",
    "forall(booking(A, S), ( booking(S, T), ( T == x ; T \\== y ) ))",
]


@pytest.mark.parametrize("goal", FACT_READ_TESTS)
async def test_a_real_test_of_a_fact_read_value_is_not_warned_about(tmp_path: Path, goal: str) -> None:
    problems = await _problems(tmp_path, _guard(goal))
    assert not any(ALWAYS in p for p in problems), problems


async def test_a_draft_with_a_split_case_analysis_is_refused() -> None:
    text = "guard('shop__delete', [id = I], ok(I)).\nok(x).\nok(I) :- I \\== x.\n"
    problems = await draft_problems("shop", [{"name": "delete", "inputSchema": {"type": "object"}}], text)
    assert any(p.severity == "error" and ALWAYS in p.message for p in problems), problems


CUT_BEFORE = [
    "ok(a) :- !, fail.\nok(_).\n",
    "ok(X) :- X == a, !, fail.\nok(_).\n",
    "ok(a) :- !, blocked(a).\nok(_).\n",
    "ok(X) :- ( X == a ; X == b ), !, fail.\nok(_) :- \\+ fail.\n",
]


@pytest.mark.parametrize("rules", CUT_BEFORE)
async def test_a_clause_a_cut_before_may_prune_is_not_taken_to_hold(tmp_path: Path, rules: str) -> None:
    """ok(a) fails where an earlier clause cuts for it: the later clause ok(_) holds only for the others."""
    problems = await _problems(tmp_path, _guard("ok(A)") + rules)
    assert not any(ALWAYS in p for p in problems), problems


async def test_a_clause_that_holds_before_any_cut_is_still_told(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, _guard("ok(A)") + "ok(_).\nok(a) :- !, fail.\n")
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


THROUGH_RULES = [
    ("ok(A)", "ok(a).\nok(X) :- other(X).\nother(X) :- X \\== a.\n"),
    ("( one(A) ; other(A) )", "one(a).\nother(X) :- X \\== a.\n"),
    ("( A == a ; other(A) )", "other(X) :- X \\== a.\n"),
    ("( one(A) -> true ; other(A) )", "one(X) :- X @< m.\nother(X) :- X @>= m.\n"),
    ("\\+ ( \\+ one(A), \\+ other(A) )", "one(a).\nother(X) :- X \\== a.\n"),
    ("ok(A)", "ok(X) :- one(X) ; other(X).\none(a).\nother(X) :- two(X).\ntwo(X) :- X \\== a.\n"),
]


@pytest.mark.parametrize(("goal", "rules"), THROUGH_RULES)
async def test_a_case_analysis_across_rules_is_warned_about(tmp_path: Path, goal: str, rules: str) -> None:
    problems = await _problems(tmp_path, _guard(goal) + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


THROUGH_RULES_TESTS = [
    ("( one(A) ; other(A) )", "one(a).\nother(X) :- X \\== b.\n"),
    ("( one(A) ; other(A) )", "one(a).\nother(X) :- X \\== a, blocked(X).\n"),
    ("( one(A) ; other(A) )", "one(a) :- !.\nother(X) :- X \\== a, atom_length(X, 2).\n"),
    ("( A == a ; ok(A) )", "ok(X) :- ok(X).\n"),  # a loop: never proved
    ("( A == a ; ok(A) )", "ok(X) :- X \\== a, ok(X).\n"),
    ("( one(A) ; other(A) )", "one(f(_)).\nother(X) :- X \\== a.\n"),
    ("( A == a ; one(A, A) )", "one(X, Y) :- X \\== Y.\n"),
]


@pytest.mark.parametrize(("goal", "rules"), THROUGH_RULES_TESTS)
async def test_rules_testing_the_argument_are_not_warned_about(tmp_path: Path, goal: str, rules: str) -> None:
    problems = await _problems(tmp_path, _guard(goal) + rules)
    assert not any(ALWAYS in p for p in problems), problems


@pytest.mark.parametrize(
    ("goal", "rules"),
    [
        ("\\+ ( booking(A, S), \\+ ok(S) )", "ok(x).\nok(X) :- X \\== x.\n"),
        ("( booking(A, S) -> ok(S) ; true )", "ok(x).\nok(X) :- X \\== x.\n"),
        ("( context_value(focus, S) -> ( S == x ; S \\== x ) ; true )", "context(focus).\n"),
    ],
)
async def test_a_value_read_then_tested_by_a_split_rule_is_warned_about(
    tmp_path: Path, goal: str, rules: str
) -> None:
    problems = await _problems(tmp_path, _guard(goal) + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems

