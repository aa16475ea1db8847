"""``check`` (no catalog needed) of a guard that holds for every call: its goal is proved whatever the facts,
the contexts, the user's answers and the call's arguments are, yet it reads as a condition (``\\+ fail``,
``(X = X)``, a disjunction with a branch that always holds, a rule whose clause needs nothing). Such a guard
looks like it tests something and lets everything through. ``true`` written as the whole goal says so openly
(the language's marker for a guard open on purpose, as transfer_to_human_agents has), as does a citation of
the policy sentence (``require(true, Reason, policy_ref(Doc, Anchor))``); neither is warned about.

Decided by evaluating the goal with every fact, answer, context and argument unknown (three-valued: what
holds whichever way the unknowns fall), not by a list of spellings; a draft holding one is refused."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

from sentinel_mcp.policy.draft_check import draft_problems

pytestmark = pytest.mark.timeout(60)

HEAD = (
    "policy_document(shop, 'policy.md').\nfact(blocked/1).\nfact(role/2).\ncontext(order_of_interest).\n"
    "askable(sure, \"Sure?\", yes_no, []).\n"
)
LINE = HEAD.count("\n") + 1
ALWAYS = "holds for every call"


_problems = partial(checked_lines, head=HEAD, policy="# Shop\n\nNever delete a customer's account.\n")


@pytest.mark.parametrize(
    "guards",
    [
        "guard('shop__delete', [], \\+ fail).\n",
        "guard('shop__delete', [], \\+ \\+ true).\n",
        "guard('shop__delete', [], \\+ false).\n",
        "guard('shop__delete', [], (X = X)).\n",
        "guard('shop__delete', [], \\+ (1 = 2)).\n",
        "guard('shop__delete', [], (blocked(x) ; true)).\n",
        "guard('shop__delete', [user = U], (role(U, admin) ; \\+ fail)).\n",
        "guard('shop__delete', [user = U], (\\+ blocked(U) ; blocked(U) ; 1 < 2)).\n",
        "guard('shop__delete', [], once(\\+ fail)).\n",
        "guard('shop__delete', [], (blocked(x) -> true ; true)).\n",
        "guard('shop__delete', [], (sure -> X = 1 ; X = 2)).\n",
        "guard('shop__delete', [], findall(B, blocked(B), _)).\n",
        "guard('shop__delete', [], forall(fail, blocked(x))).\n",
        "guard('shop__delete', [], (atom(abc), X \\== abc)).\n",
        "guard('shop__delete', [], require(\\+ fail, 'not blocked')).\n",
        "guard('shop__delete', [], ok).\nok.\n",
        "guard('shop__delete', [user = U], ok(U)).\nok(_).\n",
        "guard('shop__delete', [user = U], ok(U)).\nok(U) :- blocked(U).\nok(_) :- \\+ fail.\n",
        "guard('shop__delete', [], (context_value(order_of_interest, O) ; O = none)).\n",
        "guard('shop__delete', [], ignore(blocked(x))).\n",
        "guard('shop__*', [], (member(X, [a, b]), X == a)).\n",
        # a value spelled like the walk's own unknowns is a known value all the same
        "guard('shop__delete', [], \\+ '$sn_unknown'(1) == a).\n",
        "guard('shop__delete', [], \\+ '$sn_unknown'(0, 0) == a).\n",
        "guard('shop__delete', [], ok('$sn_unknown'(0, 0))).\nok(X) :- \\+ X == a.\n",
    ],
)
async def test_a_guard_that_holds_for_every_call_is_warned_about(tmp_path: Path, guards: str) -> None:
    problems = await _problems(tmp_path, guards)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


@pytest.mark.parametrize(
    "guards",
    [
        "guard('shop__delete', [], true).\n",  # open on purpose, and says so
        "guard('shop__delete', [], require(true, 'x', policy_ref(shop, 'Never delete a customer''s "
        "account'))).\n",
        "guard('shop__delete', [], \\+ blocked(x)).\n",
        "guard('shop__delete', [user = U], \\+ role(U, banned)).\n",
        "guard('shop__delete', [user = U], atom(U)).\n",
        "guard('shop__delete', [user = U], U \\== admin).\n",
        "guard('shop__delete', [user = U], (U = U2, U2 == admin)).\n",
        "guard('shop__delete', [], sure).\n",
        "guard('shop__delete', [], confirmed('Delete?', [])).\n",
        "guard('shop__delete', [], (blocked(x) -> fail ; true)).\n",
        "guard('shop__delete', [], \\+ (member(X, [a, b]), X == b)).\n",
        "guard('shop__delete', [], (blocked(X), X == a ; role(x, y))).\n",
        "guard('shop__delete', [], \\+ (blocked(X), X == a)).\n",
        "guard('shop__delete', [], forall(blocked(X), X == a)).\n",
        "guard('shop__delete', [], findall(B, blocked(B), [])).\n",
        "guard('shop__delete', [user = U], ok(U)).\nok(admin).\n",
        "guard('shop__delete', [user = U], \\+ ok(U)).\nok(admin).\n",
        "guard('shop__delete', [user = U, to = V], ok(U, V)).\nok(X, X).\n",
        "guard('shop__delete', [], context_value(order_of_interest, _)).\n",
        "guard('shop__delete', [], (1 == 2)).\n",
        # *-> tries the condition's next solution: the walk follows the first only, and cannot say it fails
        "guard('shop__delete', [], \\+ (member(X, [1, 2]) *-> (X == 2, \\+ blocked(x) ; X == 2) ; true)).\n",
        "guard('shop__delete', [], p).\np :- p.\n",
        # an error is no failure: the guard errs, and a guard that errs denies
        "guard('shop__delete', [], \\+ (blocked(x), fail ; atom_length(_, 3))).\n",
        # run as the gateway runs it, with the rulebase's bounded builtins: a list too long is an error
        "guard('shop__delete', [], \\+ (length(L, 50000000), L == [])).\n",
        "guard('shop__delete', [], \\+ (atom_concat(a, a, A1), atom_concat(A1, A1, A2), atom_length(A2, 4),"
        " numlist(1, 3, _))).\n",
    ],
)
async def test_a_guard_that_reads_something_or_says_it_is_open_is_not(tmp_path: Path, guards: str) -> None:
    problems = await _problems(tmp_path, guards)
    assert not any(ALWAYS in p for p in problems), problems


async def test_a_draft_with_such_a_guard_is_refused() -> None:
    text = "guard('shop__delete', [], \\+ fail).\n"
    problems = await draft_problems("shop", [{"name": "delete", "inputSchema": {"type": "object"}}], text)
    assert any(p.severity == "error" and ALWAYS in p.message for p in problems), problems
