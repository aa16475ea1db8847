"""A value a later test of a secret lets through is computed from the secret (secret_choices.pl).

A goal with several solutions (member/2, between/3, a stored fact, a rule of several clauses, a
disjunction) binds a value; a goal given the password after it that fails backtracks into it for the next,
so the value that stays is the one the password chose. The walk took the value for an input:
member(C, [a, b, c]), \\+ \\+ sub_atom(P, 0, 1, _, C), confirmed('~w', [C]) showed the password's first
letter (the negation's goals may take pieces: their proof is not kept), between(1, 64, N),
atom_length(P, N) its length, member(U, Users), login_ok(U, P, Ok), Ok == true whose password it is. Now
the variables a generator bound are computed from any secret a later goal is given; which goals have one
solution is an allow list (secret_single/3). Real SWI-Prolog."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")
HEAD = (
    "binding(login_ok(U, P, Ok), tool('x__check', [user = U, password = P]), extract([Ok = '/ok']), []).\n"
    "fact(owner/2).\n"
    "letter(a).\nletter(b).\n"
    "lower(U, L) :- downcase_atom(U, L).\n"
    "size([], 0).\nsize([_|T], N) :- size(T, M), N is M + 1.\n"
)
HEAD_LINES = HEAD.count("\n")


def _ask(of: str) -> str:
    return f"confirmed('Sign in (~w)?', [{of}])"


FIRST = "\\+ \\+ sub_atom(P, 0, 1, _, C)"  # the password's first letter is C (a negation's proof is not kept)
LEAKS = {
    "member/2 then a negated piece": f"member(C, [a, b, c]), {FIRST}, " + _ask("C"),
    "in a denial's reason": f"member(C, [a, b, c]), {FIRST}, require(fail, C)",
    "a fact-like rule": f"letter(C), {FIRST}, " + _ask("C"),
    "a stored fact": f"owner(x, C), {FIRST}, " + _ask("C"),
    "a disjunction": f"( C = a ; C = b ), {FIRST}, " + _ask("C"),
    "inside once/1": f"once(( member(C, [a, b]), {FIRST} )), " + _ask("C"),
    "inside a condition": f"( member(C, [a, b]), {FIRST} -> true ; C = none ), " + _ask("C"),
    "between/3 and the length": "between(1, 64, N), atom_length(P, N), " + _ask("N"),
    "between/3 and a length compared": "between(1, 64, N), atom_length(P, L), L =:= N, " + _ask("N"),
    "an order test": "member(C, [a, m, z]), C @> P, " + _ask("C"),
    "compare/3": "member(C, [a, m, z]), compare(<, C, P), " + _ask("C"),
    "the whole value by equality": "member(C, [a, hunter2]), C == P, " + _ask("C"),
    "whose password it is": "member(V, [ann, bob]), login_ok(V, P, Ok), Ok == true, " + _ask("V"),
    "forall/2 failing": "member(C, [a, b]), forall(member(X, [C]), \\+ sub_atom(P, 0, 1, _, X)), "
                        + _ask("C"),
}

ALLOWED = {
    "forall/2 alone": "forall(member(C, [a, b]), \\+ sub_atom(P, _, _, _, C)), " + _ask("U"),
    "a generator after the test": "atom_length(P, L), L > 3, member(C, [a, b]), " + _ask("C"),
    "a text computed first": "atom_concat(U, '@x', E), login_ok(E, P, Ok), Ok == true, " + _ask("E"),
    "a rule of one clause": "lower(U, L), login_ok(L, P, Ok), Ok == true, " + _ask("L"),
    "a rule whose clauses' heads differ": "size([a, b], N), atom_length(P, L), L > N, " + _ask("N"),
    "memberchk/2": "memberchk(C, [a, b]), atom_length(P, L), L > 3, " + _ask("C"),
    "an element by its index": "nth0(1, [a, b], C), atom_length(P, L), L > 3, " + _ask("C"),
}


def _guard(body: str) -> str:
    return f"guard('x__login', [user = U, password = P],\n      ( {body} )).\n"


def _lines(problems: list[str]) -> set[int]:
    return {int(p.split(":")[1]) for p in problems if "the secret argument" in p}


@pytest.mark.parametrize("name", list(LEAKS))
async def test_a_value_a_test_of_the_secret_lets_through_is_not_shown(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + _guard(LEAKS[name]))
    assert _lines(problems) & {HEAD_LINES + 1, HEAD_LINES + 2}, (name, problems)


@pytest.mark.parametrize("name", list(ALLOWED))
async def test_a_value_no_test_of_the_secret_chose_is_shown(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + _guard(ALLOWED[name]))
    assert not _lines(problems), (name, problems)


async def test_a_chain_of_rules_calling_the_next_twice_is_decided_once_each(tmp_path: Path) -> None:
    """Whether a rule has one solution is kept per walk: checked along every path, a chain of 20 rules each
    calling the next twice was 2^20 checks, and the load did not finish (the rulebase refused)."""
    chain = "".join(f"r{n}(X) :- r{n + 1}(X), r{n + 1}(X).\n" for n in range(20)) + "r20(a).\n"
    body = "r0(C), atom_length(P, L), L > 3, " + _ask("C")
    errors = [p for p in await _problems(tmp_path, HEAD + chain + _guard(body)) if ": error:" in p]
    assert errors == [], errors
