"""``check`` of a guard that covers every value of an argument by a case analysis: ``( U == a -> true ; U \\==
a )``, ``( U = a ; U \\= a )``, ``( U @< b ; U @>= b )``, nested, reordered, across two goals of the guard
or of one clause of a rule; and of an order test of an argument with itself (``U @=< U``, ``compare(=, U,
U)``). Each part alone tests the argument; together they let every call through.

Decided by probes, not by spellings: where each goal over an unknown compares it, by the standard order,
with constants only, its value is one for every value of the same place among those constants (equal to
one, between two, below all, above all, unbound): one probe of each place tells the value for all. A real
test of an argument (``U == a``, ``U @< b``, two cases that miss a value, a type test, arithmetic) is not
told: a false warning on a real guard is worse than a miss."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

from sentinel_mcp.policy.draft_check import draft_problems

pytestmark = pytest.mark.timeout(120)

HEAD = "fact(blocked/1).\nfact(role/2).\n"
LINE = HEAD.count("\n") + 1
ALWAYS = "holds for every call"


_problems = partial(checked_lines, head=HEAD)


def _guard(goal: str, args: str = "[user = U]") -> str:
    return f"guard('shop__delete', {args}, ({goal})).\n"


COVERING = [
    "( U == a -> true ; U \\== a )",
    "( U \\== a -> true ; U == a )",
    "( U = a ; U \\= a )",
    "( U \\= a ; U = a )",
    "( U @< b ; U @>= b )",
    "( U @>= b ; U @< b )",
    "( U @=< m ; U @> m )",
    "( U @< m ; U == m ; U @> m )",
    "( U @< m -> true ; ( U == m -> true ; U @> m ) )",
    "\\+ \\+ ( U == a ; U \\== a )",
    "\\+ ( U == a, U \\== a )",
    "( U == a -> true ; U == b -> true ; U \\== a )",
    "( U == a ; U == b ; U \\== a )",
    "( U @> 5 ; U @=< 5 )",
    "( U @=< \"s\" ; U @> \"s\" )",
    "( U == 1 ; U == 1.0 ; U \\== 1 )",
    "once(( U == a ; U \\== a ))",
    "forall(U == a, U \\== b)",
    "( U == zz -> true ; blocked(x) ; U \\== zz )",
    # across two goals: the first decides what the second reads
    "( U == a -> X = 1 ; X = 2 ), ( X == 1 ; U \\== a )",
    "compare(O, U, b), ( O == (<) ; O == (=) ; O == (>) )",
    "( U == a ; V == b ; U \\== a )",
    "( memberchk(U, [a, b]) ; U \\== a, U \\== b )",
    "( member(U, [x]) -> true ; U \\== x )",
    "\\+ ( \\+ memberchk(U, [a, 1, \"s\"]), ( U == a ; U == 1 ; U == \"s\" ) )",
]


@pytest.mark.parametrize("goal", COVERING)
async def test_a_case_analysis_that_covers_every_value_is_warned_about(tmp_path: Path, goal: str) -> None:
    problems = await _problems(tmp_path, _guard(goal, "[user = U, to = V]"))
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


@pytest.mark.parametrize(
    "rules",
    [
        "ok(X) :- ( X == a ; X \\== a ).\n",
        "ok(X) :- ( X @< k ; X @>= k ).\n",
        "ok(X) :- ( X == a -> Y = yes ; Y = no ), ( Y == yes -> true ; X \\== a ).\n",
    ],
)
async def test_a_rule_whose_clause_covers_every_value_is_warned_about(tmp_path: Path, rules: str) -> None:
    problems = await _problems(tmp_path, _guard("ok(U)") + rules)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


SELF_ORDER = [
    "U @=< U",
    "U @>= U",
    "compare(=, U, U)",
    "compare(O, U, U)",
    "\\+ U @< U",
    "\\+ U @> U",
    "\\+ compare(<, U, U)",
    "( compare(O, U, U), O == (=) )",
    "f(U, a) @=< f(U, a)",
]


@pytest.mark.parametrize("goal", SELF_ORDER)
async def test_an_order_test_of_an_argument_with_itself_is_warned_about(tmp_path: Path, goal: str) -> None:
    problems = await _problems(tmp_path, _guard(goal))
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


TESTS = [
    "( U @< b ; U @> b )",  # misses b
    "( U == a ; U \\== b )",  # misses b
    "( U @< b ; U @>= c )",  # misses what lies between b and c
    "( U @> 5 ; U @< 5 )",
    "( U @> 5 ; U @< 5 ; U == 5.0 )",  # misses 5 (5.0 is another term)
    "( U == 1 ; U \\== 1.0 )",
    "U @>= ''",  # a number is below every atom
    "U @< f(x)",
    "U @=< zz",
    "( U == a -> fail ; U \\== a )",
    "( U = a ; U \\= a ), blocked(U)",
    "( U == a -> true ; U \\== a ), U == b",
    "( U == a ; U \\== a, blocked(U) )",
    "( U == a ; atom(U) )",
    "( U == a ; atom_length(U, L), L > 3 )",
    "( U == a ; U @> a, U @< b )",
    "( U == V ; U \\== a )",
    "\\+ ( U == a ; U \\== a )",
    "\\+ ( U \\== a, U \\= a )",  # U == a, or unbound
    "( U == a -> X = 1 ; X = 2 ), X == 1",
    "( U == a -> X = 1 ; X = 2 ), ( X == 1 ; U == b )",
    "compare(O, U, b), ( O == (<) ; O == (=) )",
    "compare(<, U, U)",
    "U @< U",
    "U @=< a",
    "compare(=, U, a)",
    "( U @=< U, blocked(U) )",
    # arithmetic errs on a non-number (and the gateway denies): a test that the argument is a number
    "U >= U",
    "U =:= U",
    "U - U =:= 0",
    "abs(U) >= 0",
    "( U > 3 ; U =< 3 )",
    "( number(U) ; U == a )",
    "( U == \"a\" ; U \\== a )",  # the string "a" is not the atom a
    "( U = 1 ; U \\= 1.0 )",
    "( U @< b ; U @>= b ), U == c",
    "( U == a ; findall(x, U == b, [_]) )",
    "( U == a ; aggregate_all(count, U == b, 1) )",
    "( U == a -> true ; U \\== a ), blocked(x)",
    "( U == '' ; U @> '' )",  # a number is below ''
    "( U @< 0 ; U @> 0 )",
    "( U @< 0.0 ; U @> 0 )",  # misses 0.0 and 0 (the float first in the standard order)
    "( U == a ; X = U, X \\== a )",
    "( U == a ; U = f(_) ; U \\== a, U \\= f(_), U \\== b )",
    "( memberchk(U, [a, b]) ; U \\== a, U \\== c )",
    "( memberchk(U, [a, V]) ; U \\== a, U \\== b )",
    "\\+ memberchk(U, [a, b])",
]


@pytest.mark.parametrize("goal", TESTS)
async def test_a_real_test_of_an_argument_is_not_warned_about(tmp_path: Path, goal: str) -> None:
    problems = await _problems(tmp_path, _guard(goal, "[user = U, to = V]"))
    assert not any(ALWAYS in p for p in problems), problems


@pytest.mark.parametrize(
    "rules",
    [
        "ok(X) :- ( X == a ; X == b ).\n",
        "ok(X) :- ( X == a -> Y = yes ; Y = no ), Y == yes.\n",
        "ok(X) :- ( X @< k ; X @> k ).\n",
    ],
)
async def test_a_rule_that_tests_its_argument_is_not_warned_about(tmp_path: Path, rules: str) -> None:
    problems = await _problems(tmp_path, _guard("ok(U)") + rules)
    assert not any(ALWAYS in p for p in problems), problems


async def test_a_draft_with_a_covering_case_analysis_is_refused() -> None:
    text = "guard('shop__delete', [id = I], ( I == x -> true ; I \\== x )).\n"
    problems = await draft_problems("shop", [{"name": "delete", "inputSchema": {"type": "object"}}], text)
    assert any(p.severity == "error" and ALWAYS in p.message for p in problems), problems
