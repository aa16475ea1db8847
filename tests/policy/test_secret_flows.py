"""A value made from a secret argument (named secret: ``redactor.secret_name``) never reaches a question, a
denial's reason or a fact an effect writes: the loader follows it (secret_flows.pl) and refuses, with file and
line, any goal that makes something of it (a proof keeps every goal with its values: the audit, the console,
why-not) and any site it reaches whole: it may be compared, measured, or passed whole to a tool or a rule.
Before, only the whole value was masked at run time, so a piece of it (``sub_atom/5``), a case change, its
characters reversed, ``format/3`` of it, a hash or a digit sum reached the person."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

from sentinel_mcp.core.secret_names import secret_name

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")
MINE = "the secret argument"  # both messages: a goal given it, a site holding it

HEAD = (
    "binding(login_ok(U, P, Ok), tool('x__check', [user = U, password = P]), extract([Ok = '/ok']), []).\n"
    "askable(why(U, W), \"Why sign ~w in?\", text, []).\n"
    "fact(hint/2).\n"
)
HEAD_LINES = HEAD.count("\n")


def _guard(body: str, name: str = "password") -> str:
    return f"guard('x__login', [user = U, '{name}' = P],\n      ( {body} )).\n"


LEAKS = {
    "the whole value": _guard("confirmed('Sign in with ~w?', [P])"),
    "sub_atom": _guard("sub_atom(P, 0, 4, _, H), confirmed('Starts with ~w?', [H])"),
    "upcase_atom": _guard("upcase_atom(P, H), confirmed('Sign in with ~w?', [H])"),
    "codes reversed": _guard("atom_codes(P, Cs), reverse(Cs, Rs), atom_codes(H, Rs), confirmed('~w?', [H])"),
    "chars": _guard("atom_chars(P, Cs), confirmed('Sign in with ~w?', [Cs])"),
    "format into an atom": _guard("format(atom(A), '~a', [P]), confirmed('Sign in with ~w?', [A])"),
    "string_concat": _guard("string_concat(P, \"!\", S), confirmed('Sign in with ~w?', [S])"),
    "a digit sum": _guard("atom_number(P, N), S is N mod 10, confirmed('Last digit ~w?', [S])", "pin"),
    "arithmetic": _guard("atom_number(P, N), S is N + 1, confirmed('~w?', [S])", "cardNumber"),
    "an askable's question": _guard("sub_atom(P, 0, 2, _, H), why(H, _)"),
    "a denial's reason": _guard("atom_concat('bad ', P, R), require(P == x, R)"),
    "a helper's result": _guard("hint_of(P, H), confirmed('Sign in with ~w?', [H])")
    + "hint_of(P, H) :- sub_atom(P, 0, 3, _, H).\n",
    "a helper's question": _guard("ask_about(P)")
    + "ask_about(P) :- upcase_atom(P, H), confirmed('~w?', [H]).\n",
    "a findall over its characters": _guard(
        "atom_chars(P, Cs), findall(C, member(C, Cs), L), confirmed('~w', [L])"),
    "one branch of an if-then-else": _guard(
        "( U == a -> sub_atom(P, 0, 1, _, H) ; H = x ), confirmed('~w', [H])"),
    "an api key's name glued": _guard("sub_atom(P, 0, 4, _, H), confirmed('~w', [H])", "apiKey"),
    "an effect's fact": "effect('x__login', [user = U, password = P], [establish(hint(U, P))]).\n",
    # a proof keeps every goal with its values (the audit, the console, why-not): never a transform
    "a transform kept only in the proof": _guard(
        "upcase_atom(P, H), H \\== P, confirmed('Sign ~w in?', [U])"),
    "a hash kept in the proof": _guard(
        "crypto_data_hash(P, H, [algorithm(sha256)]), H \\== x, confirmed('Sign ~w in?', [U])", "pin"),
    "an alias then a piece": _guard("Q = P, sub_atom(Q, 0, 1, _, H), H \\== x, confirmed('~w?', [U])"),
    "a helper that takes a piece": _guard("first(P, F), F \\== x, confirmed('~w?', [U])")
    + "first(P, F) :- sub_atom(P, 0, 1, _, F).\n",
    # the whole argument list (args/1), the secret read from it by its name
    "option_value of the whole list": "guard('x__login', [args(A)],\n      ( option_value(A, password, '', "
    "P), sub_atom(P, 0, 2, _, H), confirmed('~w?', [H]) )).\n",
    "option_value of the list, a PIN": "guard('x__login', [user = U, args(A)],\n      ( option_value(A, pin, "
    "0, P), S is P mod 10, confirmed('~w ~w?', [U, S]) )).\n",
}
ALLOWED = {
    "compared": _guard("P \\== '', atom_length(P, N), N >= 8, confirmed('Sign ~w in?', [U])"),
    "passed whole to a tool": _guard("login_ok(U, P, Ok), Ok == true, confirmed('Sign ~w in?', [U])"),
    "compared to a written value": _guard("P \\= 'hunter2', confirmed('Sign ~w in?', [U])"),
    "a helper that only checks": _guard("strong(P), confirmed('Sign ~w in?', [U])")
    + "strong(P) :- atom_length(P, N), N >= 12.\n",
    "a stored fact looked up by it": _guard("\\+ hint(U, P), confirmed('Sign ~w in?', [U])"),
    "a helper given it whole that compares": _guard("is_default(P, D), D == no, confirmed('~w?', [U])")
    + "is_default(P, yes) :- P == changeme.\nis_default(P, no) :- P \\== changeme.\n",
    "an argument named otherwise": _guard("sub_atom(P, 0, 4, _, H), confirmed('~w', [H])", "note"),
    "another argument of the whole list": "guard('x__login', [args(A)],\n      ( option_value(A, user, '', "
    "U), sub_atom(U, 0, 2, _, H), confirmed('~w?', [H]) )).\n",
}


@pytest.mark.parametrize("name", list(LEAKS))
async def test_a_value_made_from_a_secret_reaching_what_a_person_reads_is_refused(tmp_path: Path,
                                                                                 name: str) -> None:
    problems = await _problems(tmp_path, HEAD + LEAKS[name])
    mine = [p for p in problems if MINE in p]
    assert mine, (name, problems)
    lines = {int(p.split(":")[1]) for p in mine}
    assert lines <= set(range(HEAD_LINES + 1, HEAD_LINES + 1 + LEAKS[name].count("\n"))), (name, mine)


@pytest.mark.parametrize("name", list(ALLOWED))
async def test_what_may_be_done_with_a_secret_loads(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + ALLOWED[name])
    assert not [p for p in problems if MINE in p], (name, problems)


@pytest.mark.parametrize("rulebase", sorted(Path("rulebases").glob("*.pl")), ids=lambda p: p.name)
async def test_every_shipped_rulebase_loads_unchanged(tmp_path: Path, rulebase: Path) -> None:
    problems = await _problems(tmp_path, rulebase.read_text(encoding="utf-8"), name=rulebase.name)
    assert not [p for p in problems if MINE in p], problems


NAMES = ["password", "new_password", "apiKey", "api_key", "PIN", "pin2", "cardNumber", "card_number",
         "one_time_code", "sms_code", "x_token", "cvv2", "passWd", "user", "note", "pinned", "tokens", "spin",
         "keyboard", "card", "code", "OneTimeCode", "clientSecret", "authorization", "mfa_code"]


async def test_the_loader_reads_a_secret_name_as_the_redactor_does(tmp_path: Path) -> None:
    text = "".join(_guard("sub_atom(P, 0, 1, _, H), confirmed('~w', [H])", n).replace("x__login", f"x__t{i}")
                   for i, n in enumerate(NAMES))
    problems = await _problems(tmp_path, HEAD + text)
    refused = {NAMES[(int(p.split(":")[1]) - HEAD_LINES - 1) // 2] for p in problems
               if MINE in p}
    assert refused == {n for n in NAMES if secret_name(n)}, problems
