"""``check`` of a guard that holds for every value of the call's ARGUMENTS (and of what it reads): ``U = U``,
``U == U``, ``\\+ U \\== U``, ``copy_term(U, _)``, ``member(U, [U])``, ``f(U) \\= g(V)``. Such a goal looks
like a test of the argument and lets every call through.

Only what holds for every value is one: a unification of terms that unify whatever the unknowns are (their
first solution binds none of them), an identity of identical terms, the negation of what fails for every
value. A test that some value meets and another does not (``U == admin``, ``atom_length(U, _)``, ``append(U,
[], U)``, ``U = V``) is not told: a false warning on a real guard is worse than a miss. And a walk that runs
out of its budget says so rather than nothing."""

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
UNFINISHED = "could not finish checking"


_problems = partial(checked_lines, head=HEAD)


@pytest.mark.parametrize(
    "guards",
    [
        "guard('shop__delete', [user = U], U = U).\n",
        "guard('shop__delete', [user = U], U == U).\n",
        "guard('shop__delete', [user = U], \\+ U \\== U).\n",
        "guard('shop__delete', [user = U], \\+ U \\= U).\n",
        "guard('shop__delete', [user = U], \\+ \\+ U = U).\n",
        "guard('shop__delete', [user = U], (U = U ; blocked(x))).\n",
        "guard('shop__delete', [user = U], (blocked(U) ; U == U)).\n",
        "guard('shop__delete', [user = U], (U = U, true)).\n",
        "guard('shop__delete', [user = U], (true, U == U)).\n",
        "guard('shop__delete', [user = U], U = _).\n",
        "guard('shop__delete', [user = U], _ = U).\n",
        "guard('shop__delete', [user = U], f(U, _) = f(_, U)).\n",
        "guard('shop__delete', [user = U], (X = U, X == U)).\n",
        "guard('shop__delete', [user = U], (X = f(U), X == f(U))).\n",
        "guard('shop__delete', [user = U], copy_term(U, _)).\n",
        "guard('shop__delete', [user = U], member(U, [U])).\n",
        "guard('shop__delete', [user = U], member(U, [U, admin])).\n",
        "guard('shop__delete', [user = U], memberchk(U, [U])).\n",
        "guard('shop__delete', [user = U], member(x, [x])).\n",
        "guard('shop__delete', [user = U], append([U], [], [U])).\n",
        "guard('shop__delete', [user = U], member(U, _)).\n",
        "guard('shop__delete', [user = U, to = V], f(U) \\= g(V)).\n",
        "guard('shop__delete', [user = U, to = V], \\+ f(U) == g(V)).\n",
        "guard('shop__delete', [user = U, to = V], [U] \\== [U, V]).\n",
        "guard('shop__delete', [args(A)], A = A).\n",
        "guard('shop__delete', [user = U], memberchk(U-1, [a-2, U-1])).\n",
        "guard('shop__delete', [user = U], forall(member(X, [U]), X == U)).\n",
        "guard('shop__delete', [user = U], var(_)).\n",
        # a value read from a fact is unknown as an argument is
        "guard('shop__delete', [user = U], (role(U, R) -> R == R ; true)).\n",
        "guard('shop__delete', [user = U], \\+ (role(U, R), R \\== R)).\n",
        # through a rule of the rulebase
        "guard('shop__delete', [user = U], ok(U)).\nok(X) :- X = X.\n",
        "guard('shop__delete', [user = U], ok(U)).\nok(X) :- \\+ X \\== X.\n",
        "guard('shop__delete', [user = U], ok(U, U)).\nok(X, Y) :- X == Y.\n",
    ],
)
async def test_a_guard_that_holds_for_every_argument_is_warned_about(tmp_path: Path, guards: str) -> None:
    problems = await _problems(tmp_path, guards)
    assert any(p.startswith(f"warning {LINE} ") and ALWAYS in p for p in problems), problems


@pytest.mark.parametrize(
    "guards",
    [
        "guard('shop__delete', [user = U], U = admin).\n",
        "guard('shop__delete', [user = U], admin = U).\n",
        "guard('shop__delete', [user = U], U == admin).\n",
        "guard('shop__delete', [user = U], \\+ U == admin).\n",
        "guard('shop__delete', [user = U], U \\= admin).\n",
        "guard('shop__delete', [user = U], \\+ \\+ U = admin).\n",
        "guard('shop__delete', [user = U], f(U) = f(admin)).\n",
        "guard('shop__delete', [user = U, to = V], U = V).\n",
        "guard('shop__delete', [user = U, to = V], U == V).\n",
        "guard('shop__delete', [user = U, to = V], \\+ U \\== V).\n",
        "guard('shop__delete', [user = U, to = V], U \\== V).\n",
        "guard('shop__delete', [user = U, to = V], U \\= V).\n",
        "guard('shop__delete', [user = U, to = V], f(U, V) = f(V, admin)).\n",
        "guard('shop__delete', [user = U], member(U, [a, b])).\n",
        "guard('shop__delete', [user = U], memberchk(U, [a, b])).\n",
        "guard('shop__delete', [user = U], member(a, U)).\n",
        "guard('shop__delete', [user = U], append(U, [], U)).\n",
        "guard('shop__delete', [user = U], append(_, [admin], U)).\n",
        "guard('shop__delete', [user = U], atom_length(U, _)).\n",
        "guard('shop__delete', [user = U], atom(U)).\n",
        "guard('shop__delete', [user = U], nonvar(U)).\n",
        "guard('shop__delete', [user = U], var(U)).\n",
        "guard('shop__delete', [user = U], ground(U)).\n",
        "guard('shop__delete', [user = U], copy_term(U, admin)).\n",
        "guard('shop__delete', [user = U], copy_term(f(U), f(a))).\n",
        "guard('shop__delete', [user = U], (U = a ; U = b)).\n",
        "guard('shop__delete', [user = U], (U == a -> true ; U == b)).\n",
        "guard('shop__delete', [user = U], (X = U, X == admin)).\n",
        # the gateway takes the first solution: for U = a it binds X to 2
        "guard('shop__delete', [user = U], (memberchk(U-X, [a-2, U-1]), X == 1)).\n",
        "guard('shop__delete', [user = U], (member(X, [U, a]), X == a)).\n",
        "guard('shop__delete', [user = U], (X \\= U, X == a)).\n",
        "guard('shop__delete', [user = U], (role(U, R), R == R, blocked(U))).\n",
        "guard('shop__delete', [user = U], (role(U, R), R == U)).\n",
        "guard('shop__delete', [user = U], (U == U, blocked(U))).\n",
        "guard('shop__delete', [user = U], \\+ (U = U, blocked(U))).\n",
        "guard('shop__delete', [user = U], ok(U)).\nok(X) :- X == admin.\n",
        "guard('shop__delete', [user = U, to = V], ok(U, V)).\nok(X, Y) :- X == Y.\n",
        "guard('shop__delete', [user = U, to = V], ok(U, V)).\nok(X, X).\n",
    ],
)
async def test_a_guard_that_tests_its_argument_is_not(tmp_path: Path, guards: str) -> None:
    problems = await _problems(tmp_path, guards)
    assert not any(ALWAYS in p for p in problems), problems


async def test_a_walk_out_of_its_budget_says_so(tmp_path: Path) -> None:
    # eight calls a level, six levels deep: past the walk's budget long before it tells anything
    levels = "".join(
        f"p{i} :- {', '.join([f'p{i + 1}'] * 8)}.\n" for i in range(1, 7)
    ) + "p7 :- blocked(x).\n"
    problems = await _problems(tmp_path, "guard('shop__delete', [], (p1 ; \\+ fail)).\n" + levels)
    # the disjunction's second branch holds, but the first is walked first and eats the budget
    assert any(p.startswith(f"warning {LINE} ") and UNFINISHED in p and "shop__delete" in p
               for p in problems), problems
    assert not any(ALWAYS in p for p in problems), problems


async def test_a_walk_that_finishes_says_nothing_of_its_budget(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, "guard('shop__delete', [user = U], \\+ blocked(U)).\n")
    assert not any(UNFINISHED in p for p in problems), problems


async def test_a_draft_with_a_guard_true_of_every_argument_is_refused() -> None:
    text = "guard('shop__delete', [id = I], I == I).\n"
    problems = await draft_problems("shop", [{"name": "delete", "inputSchema": {"type": "object"}}], text)
    assert any(p.severity == "error" and ALWAYS in p.message for p in problems), problems
