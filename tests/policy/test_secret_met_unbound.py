"""A variable met before but still unbound is bound by a goal given a secret (secret_flows.pl).

The walk told a goal's outputs from the variables it had not met yet: a variable met in an alias
(``Y = [X]``), a type test (``var(Y)``), a comparison, a negation, a collection's template or one branch only
was taken for an input, so what a tool, a fact or a measure answered for the secret through it came out clean
(``Y = [X], login_ok(U, P, Y)``: ``X`` is the tool's answer for the password). Now a variable is an input only
once a goal binds it (the call's arguments, a goal that computes it, an alias of a bound value, a rule
binding it in every clause), and a value
built of variables (an alias) holds what they hold: binding it binds them, and showing it shows them. Real
SWI-Prolog."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")
HEAD = (
    "binding(login_ok(U, P, Ok), tool('x__check', [user = U, password = P]), extract([Ok = '/ok']), []).\n"
    "askable(why(U, W), \"Why sign ~w in?\", text, []).\n"
    "fact(owner/2).\n"
    "via(P, Ok) :- login_ok(u, P, Ok).\n"
    "lower(U, L) :- downcase_atom(U, L).\n"
    "noop(_).\nis_new(Y) :- var(Y).\nsize([], 0).\nsize([_|T], N) :- size(T, M), N is M + 1.\n"
)
HEAD_LINES = HEAD.count("\n")


def _ask(of: str) -> str:
    return f"confirmed('Sign in (~w)?', [{of}])"


# each what a goal given the secret binds through a variable met before, reaching what a person reads
LEAKS = {
    "a part of a list met before": "Y = [X], login_ok(U, P, Y), " + _ask("X"),
    "a part of an object met before": "Y = json([ok = X]), login_ok(U, P, Y), " + _ask("X"),
    "a part of a term met before": "Y = f(g(X)), login_ok(U, P, Y), " + _ask("X"),
    "an alias met before": "Y = Z, login_ok(U, P, Y), " + _ask("Z"),
    "the alias itself": "Z = Y, login_ok(U, P, Y), " + _ask("Y"),
    "an alias of an alias": "Y = Z, Z = W, login_ok(U, P, Y), " + _ask("W"),
    "a list's tail": "Y = [_|T], login_ok(U, P, Y), " + _ask("T"),
    "two sides taken apart": "[Y, a] = [Z, a], login_ok(U, P, Y), " + _ask("Z"),
    "the whole bound later through a part": "Y = [X], owner(P, X), " + _ask("Y"),
    "a fact kept for it": "Y = [X], owner(P, Y), " + _ask("X"),
    "a measure": "Y = Z, atom_length(P, Y), " + _ask("Z"),
    "compare/3": "Y = Z, compare(Y, P, m), " + _ask("Z"),
    "a rule's answer": "Y = [X], via(P, Y), " + _ask("X"),
    "met in a type test": "var(Y), login_ok(U, P, Y), " + _ask("Y"),
    "met in a comparison": "Y \\== no, login_ok(U, P, Y), " + _ask("Y"),
    "met in an order test": "\\+ Y @< a, login_ok(U, P, Y), " + _ask("Y"),
    "met under a negation": "\\+ Y = no, login_ok(U, P, Y), " + _ask("Y"),
    "met under a negated goal that binds": "\\+ \\+ member(Y, [a]), login_ok(U, P, Y), " + _ask("Y"),
    "met in a collection's template": "findall(Y, member(Y, [a]), _), login_ok(U, P, Y), " + _ask("Y"),
    "met in a collection's goal": "aggregate_all(count, member(Y, [a]), _), login_ok(U, P, Y), " + _ask("Y"),
    "met in forall": "forall(member(Y, [a]), true), login_ok(U, P, Y), " + _ask("Y"),
    "bound in one branch only": "( U == ann -> Y = a ; true ), login_ok(U, P, Y), " + _ask("Y"),
    "bound in one disjunct only": "( U == ann, Y = a ; U \\== ann ), login_ok(U, P, Y), " + _ask("Y"),
    "a branch the secret chose": "Y = Z, ( P @< m -> Y = a ; Y = b ), " + _ask("Z"),
    "an askable's question": "Y = [X], login_ok(U, P, Y), why(X, _)",
    "a denial's reason": "Y = [X], login_ok(U, P, Y), require(fail, X)",
    "met in a rule's head": "Y = [X], again(P, Y), " + _ask("X"),
    "met in a rule that binds nothing": "noop(Y), login_ok(U, P, Y), " + _ask("Y"),
    "met in a rule that tests it": "is_new(Y), login_ok(U, P, Y), " + _ask("Y"),
    "met in a rule binding it in one clause only": "perhaps(U, Y), login_ok(U, P, Y), " + _ask("Y"),
}
RULES = "again(P, Y) :- Y = Z, login_ok(u, P, Z).\nperhaps(ann, a).\nperhaps(_, _).\n"

# what still loads: an input met before is no output
ALLOWED = {
    "the user through an alias": "V = U, login_ok(V, P, Ok), Ok == true, " + _ask("V"),
    "a value built of the user": "V = [U], login_ok(U, P, Ok), Ok == true, " + _ask("V"),
    "a written value": "Y = ok, login_ok(U, P, Y), " + _ask("U"),
    "a term holding the user and the answer, the user shown": "Y = [U, Ok], login_ok(U, P, Ok), " + _ask("U"),
    "the user tested first": "atom(U), login_ok(U, P, Ok), Ok == true, " + _ask("U"),
    "a text computed before": "atom_concat(U, '@x', E), login_ok(E, P, Ok), Ok == true, " + _ask("E"),
    "a rule's answer before": "lower(U, L), login_ok(L, P, Ok), Ok == true, " + _ask("L"),
    "bound in both branches": "( U == ann -> E = a ; E = b ), login_ok(E, P, Ok), Ok == true, " + _ask("E"),
    "a recursive rule's answer before": "size([a, b], N), login_ok(U, P, N), " + _ask("N"),
    "an alias of a bound value": "atom_length(U, N), M = N, login_ok(U, P, M), " + _ask("M"),
}


def _guard(body: str) -> str:
    return f"guard('x__login', [user = U, password = P],\n      ( {body} )).\n"


def _lines(problems: list[str]) -> set[int]:
    return {int(p.split(":")[1]) for p in problems if "the secret argument" in p}


@pytest.mark.parametrize("name", list(LEAKS))
async def test_what_a_goal_given_a_secret_binds_through_a_variable_met_before_is_followed(
        tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + RULES + _guard(LEAKS[name]))
    first = HEAD_LINES + RULES.count("\n") + 1
    assert _lines(problems) & {first, first + 1}, (name, problems)


@pytest.mark.parametrize("name", list(ALLOWED))
async def test_an_input_met_before_is_no_output(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + _guard(ALLOWED[name]))
    assert not _lines(problems), (name, problems)
