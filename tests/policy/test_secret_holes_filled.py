"""A term built with holes is no bound value: a goal given a secret fills them (secret_bindings.pl,
secret_ground_row/4).

The walk took what any computing goal bound for a bound value, so a list, a term or a copy built with
unbound elements (length(L, 1), functor(T, f, 1), copy_term/2, =.., append/3 with an unbound tail, a
collection of holes) and then given to a tool with the password came out clean, though its element was the
tool's answer for the password: length(L, 1), L = [X], login_ok(U, P, L), confirmed('~w', [X]). Now a
computing goal binds ground only what its row says (an atom, a number, or every output when the inputs it
names were known bound); its other variables stay open and held together, so a later goal given a secret
taints them. Real SWI-Prolog."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from sentinel_mcp.policy.engine import shared_engine
from tests.support.checked_rulebase import checked_lines

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")
HEAD = (
    "binding(login_ok(U, P, Ok), tool('x__check', [user = U, password = P]), extract([Ok = '/ok']), []).\n"
    "fact(owner/2).\n"
    "holed(L) :- length(L, 2).\n"
)
HEAD_LINES = HEAD.count("\n")


def _ask(of: str) -> str:
    return f"confirmed('Sign in (~w)?', [{of}])"


# each a term built with a hole, the hole filled by a goal given the password, the hole shown
LEAKS = {
    "length/2 then an alias": "length(L, 1), L = [X], login_ok(U, P, L), " + _ask("X"),
    "length/2, the alias after": "length(L, 1), login_ok(U, P, L), L = [X], " + _ask("X"),
    "functor/3 then arg/3 after": "functor(T, f, 1), login_ok(U, P, T), arg(1, T, X), " + _ask("X"),
    "functor/3 then arg/3 before": "functor(T, f, 1), arg(1, T, X), login_ok(U, P, T), " + _ask("X"),
    "copy_term/2": "copy_term(f(_), T), T = f(X), login_ok(U, P, T), " + _ask("X"),
    "=../2": "T =.. [f, X], login_ok(U, P, T), " + _ask("X"),
    "append/3 with an unbound tail": "append([a], X, L), login_ok(U, P, L), " + _ask("X"),
    "nth0/3 of a list of holes": "length(L, 2), nth0(0, L, X), login_ok(U, P, L), " + _ask("X"),
    "a collection of holes": "findall(_, member(_, [a]), L), L = [X], login_ok(U, P, L), " + _ask("X"),
    "pairs_keys_values/3": "pairs_keys_values(L, [k], [X]), login_ok(U, P, L), " + _ask("X"),
    "term_variables/2": "T = f(X), term_variables(T, Vs), login_ok(U, P, Vs), " + _ask("X"),
    "a stored fact's answer": "length(L, 1), owner(P, L), L = [X], " + _ask("X"),
    "a measure's": "length(L, 1), L = [X], atom_length(P, L), " + _ask("X"),
    "a rule building it": "holed(L), login_ok(U, P, L), L = [X|_], " + _ask("X"),
}

# a term computed whole from known values is bound: a tool's input, no output
ALLOWED = {
    "a list of the user": "length([U], N), login_ok(U, P, Ok), Ok == true, " + _ask("N"),
    "a term of the user taken apart": "T =.. [f, U], arg(1, T, X), login_ok(X, P, Ok), Ok == true, "
                                      + _ask("X"),
    "an element of a written list": "nth0(1, [a, b], X), login_ok(X, P, Ok), Ok == true, " + _ask("X"),
    "a copy of a written term": "copy_term(f(a), T), login_ok(U, P, T), " + _ask("T"),
    "a collection of the user": "findall(U, member(_, [a]), L), login_ok(L, P, Ok), Ok == true, " + _ask("L"),
    "a text built of it": "atom_concat(U, '@x', E), login_ok(E, P, Ok), Ok == true, " + _ask("E"),
}


def _guard(body: str) -> str:
    return f"guard('x__login', [user = U, password = P],\n      ( {body} )).\n"


def _lines(problems: list[str]) -> set[int]:
    return {int(p.split(":")[1]) for p in problems if "the secret argument" in p}


@pytest.mark.parametrize("name", list(LEAKS))
async def test_a_hole_a_goal_given_a_secret_fills_is_followed(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + _guard(LEAKS[name]))
    assert _lines(problems) & {HEAD_LINES + 1, HEAD_LINES + 2}, (name, problems)


@pytest.mark.parametrize("name", list(ALLOWED))
async def test_a_term_built_of_known_values_is_no_output(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + _guard(ALLOWED[name]))
    assert not _lines(problems), (name, problems)


async def test_every_computing_goal_has_a_ground_row() -> None:
    """A computing goal (makes, measure) with no row binds nothing ground, which only over-refuses; each is
    decided on purpose all the same, so a goal added to the taint table gets its row too."""
    goal = ("findall(N/A, ( ( sentinel_core:pure_builtin(N, A) ; sentinel_core:rulebase_only_builtin(N/A) "
            "; module_property(sentinel_rt, exports(Ex)), member(N/A, Ex) ), "
            "sentinel_core:secret_flow_kind(N/A, K), memberchk(K, [makes, measure]), "
            "\\+ sentinel_core:secret_ground_row(N, A, _, _) ), Missing0), sort(Missing0, Missing), "
            "length(Missing, Count), format(atom(Shown), '~q', [Missing])")
    rows = await shared_engine().run(lambda p: list(p.query(goal, maxresult=1)))
    assert rows and str(rows[0]["Shown"]) == "[]", rows
