"""The whole argument list shown to a person is refused at load when the tool has a secret argument the
rulebase names (secret_flows.pl, secret_strict_list/2).

``args(A)`` holds every argument of the call. At load the loader cannot know which arguments a tool has, so
the list is no secret (a device guard reads every argument so), and the masking at run time hides a secret
value whole in what is shown. But a guard that puts the whole list into a question, a denial's reason, an
askable or a fact shows every argument to a person, the tool's secret ones included, and when the rulebase
itself says the tool has one (the guard's own pattern names it, a binding or another guard or effect of the
tool does, or the guard reads it from the list by its name) the loader can name the leak: refused with file
and line. A guard of a tool no rule names a secret argument of may show the list: what it holds of a secret
is known only from the tool's schema, and the listing walk refuses it then
(tests/policy/test_schema_secret_flows.py, tests/gateway/test_schema_secret_guards.py). Real SWI-Prolog."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_lines

pytestmark = pytest.mark.timeout(120)

_problems = partial(checked_lines, shown="full")
HEAD = (
    "binding(login_ok(U, P, Ok), tool('x__check', [user = U, password = P]), extract([Ok = '/ok']), []).\n"
    "askable(why(U, W), \"Why ~w?\", text, []).\n"
    "fact(hint/1).\n"
)

# how the rulebase says the tool has a secret argument: (the pattern's other elements, a rule after the guard)
NAMERS = {
    "its own pattern": ("x__login", "pin = _, ", ""),
    "its own pattern, camelCase": ("x__login", "apiKey = _, ", ""),
    "a binding of the tool": ("x__check", "", ""),
    "another guard of the tool": ("x__login", "", "guard('x__login', [otp = O], ( O \\== '' )).\n"),
    "an effect of the tool": ("x__login", "", "effect('x__login', [token = _], []).\n"),
    "a prefix guard naming it": ("x__login", "", "guard('x__*', [cvv = O], ( O \\== '' )).\n"),
}

# the whole list shown (its text, a copy, its values: what another goal makes of the list was refused before,
# tests/policy/test_secret_derived_flows.py)
SHOWN = {
    "a question": "confirmed('Call with ~w?', [A])",
    "a question among others": "confirmed('~w: ~w?', [x, A])",
    "a question's nested term": "confirmed('~w?', [call(A)])",
    "a question's items": "confirmed_items(call, [A])",
    "a denial's reason": "require(fail, A)",
    "a denial's reason with a code": "require(fail, A, code)",
    "an askable": "why(A, _)",
    "an alias of it": "B = A, confirmed('~w?', [B])",
    "read by a rule": "shown(A)",
}
RULES = "shown(A) :- confirmed('~w?', [A]).\n"


def _guard(tool: str, pattern: str, body: str) -> str:
    return f"guard('{tool}', [{pattern}args(A)],\n      ( {body} )).\n"


@pytest.mark.parametrize("namer", list(NAMERS))
@pytest.mark.parametrize("shown", list(SHOWN))
async def test_the_whole_list_shown_is_refused_when_the_rulebase_names_a_secret_argument(
        tmp_path: Path, namer: str, shown: str) -> None:
    tool, pattern, after = NAMERS[namer]
    text = HEAD + RULES + _guard(tool, pattern, SHOWN[shown]) + after
    first = HEAD.count("\n") + RULES.count("\n") + 1
    lines = {int(p.split(":")[1]) for p in await _problems(tmp_path, text) if "secret argument" in p}
    assert lines & {first, first + 1, first - 1}, (namer, shown, lines)


READ_BY_NAME = {
    "memberchk": "memberchk(password = P, A), P \\== ''",
    "option_value": "option_value(A, pin, '', P), P \\== ''",
}


@pytest.mark.parametrize("read", list(READ_BY_NAME))
async def test_a_guard_reading_a_secret_by_its_name_names_it(tmp_path: Path, read: str) -> None:
    text = HEAD + _guard("x__login", "", f"{READ_BY_NAME[read]}, confirmed('~w?', [A])")
    lines = {int(p.split(":")[1]) for p in await _problems(tmp_path, text) if "secret argument" in p}
    assert lines & {4, 5}, (read, lines)


ALLOWED = {
    "no rule names a secret argument of the tool": _guard("x__note", "", "confirmed('Call with ~w?', [A])"),
    "another tool's secret": _guard("x__note", "", "confirmed('~w?', [A])")
                             + "guard('x__login', [pin = P], ( P \\== '' )).\n",
    "another argument by its name": _guard("x__login", "pin = _, ",
                                           "option_value(A, user, '', U), confirmed('~w?', [U])"),
    "how many arguments": _guard("x__login", "pin = _, ", "length(A, N), confirmed('~w?', [N])"),
    "a clean key read, the list shown": _guard("x__note", "", "option_value(A, user, '', U), U \\== '', "
                                               "confirmed('Call with ~w?', [A])"),
    "the list measured and shown": _guard("x__note", "", "length(A, N), N > 0, confirmed('~w?', [A])"),
    "the list's keys checked": _guard("x__login", "pin = _, ",
                                      "forall(member(K = _, A), atom(K)), confirmed('go?', [])"),
}


@pytest.mark.parametrize("name", list(ALLOWED))
async def test_what_a_guard_may_do_with_the_list_loads(tmp_path: Path, name: str) -> None:
    problems = await _problems(tmp_path, HEAD + ALLOWED[name])
    assert not [p for p in problems if "secret argument" in p], (name, problems)


@pytest.mark.parametrize("write", ["establish(hint(A))", "establish(hint(call(A)), 60)"])
async def test_an_effect_writing_the_whole_list_of_a_tool_with_a_named_secret_is_refused(tmp_path: Path,
                                                                                        write: str) -> None:
    text = HEAD + f"effect('x__check', [args(A)],\n       [{write}]).\n"
    lines = {int(p.split(":")[1]) for p in await _problems(tmp_path, text) if "secret argument" in p}
    assert lines & {4, 5}, (write, lines)


# a read of the list by a key the rulebase does not write as a clean name: the tool may have a secret argument
# (an allow list of clean reads: a written key naming no secret, the list's length, the list passed whole)
UNCLEAN_READS = {
    "a key a helper rule gives": ("key_of(K) :- K = password.\n", "key_of(K), member(K = V, A), V \\== ''"),
    "a key a fact gives": ("", "hint(K), memberchk(K = V, A), V \\== ''"),
    "a key atom_concat/3 builds": ("", "atom_concat(pass, word, K), option_value(A, K, '', V), V \\== ''"),
    "a key sub_atom/5 takes": ("", "sub_atom(xpasswordx, 1, 8, _, K), option_value(A, K, '', V), V \\== ''"),
    "a secret key read in a helper rule": ("key_read(A, V) :- option_value(A, password, '', V).\n",
                                           "key_read(A, V), V \\== ''"),
    "a secret key a helper rule is given": ("key_read(A, K, V) :- memberchk(K = V, A).\n",
                                            "key_read(A, password, V), V \\== ''"),
    "a read by position": ("", "nth0(0, A, K = V), K == password, V \\== ''"),
    "a read by shape": ("", "A = [_ = V|_], V \\== ''"),
    "a key from a list of keys": ("", "forall(member(K, [pin]), option_value(A, K, '', _))"),
}


@pytest.mark.parametrize("read", list(UNCLEAN_READS))
async def test_a_list_read_by_a_key_not_written_clean_may_not_be_shown(tmp_path: Path, read: str) -> None:
    rules, body = UNCLEAN_READS[read]
    text = HEAD + rules + _guard("x__note", "", f"{body}, confirmed('Call with ~w?', [A])")
    first = HEAD.count("\n") + rules.count("\n") + 1
    problems = [p for p in await _problems(tmp_path, text) if "secret argument" in p]
    assert {int(p.split(":")[1]) for p in problems} & {first, first + 1}, (read, problems)
    assert all("by a key" in p for p in problems), problems  # the error says how it was read


@pytest.mark.parametrize("read", list(UNCLEAN_READS))
async def test_a_list_read_by_a_key_not_written_clean_may_be_checked(tmp_path: Path, read: str) -> None:
    rules, body = UNCLEAN_READS[read]
    text = HEAD + rules + _guard("x__note", "", f"{body}, confirmed('Call?', [])")
    assert not [p for p in await _problems(tmp_path, text) if "secret argument" in p], read
