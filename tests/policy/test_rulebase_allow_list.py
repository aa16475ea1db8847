"""Rulebases read from disk are checked against the same allow list as client goals: a rule, guard or context
check that could run code, touch files or change the engine does not load, `sentinel-mcp check` names the
file, line and call, and nothing in the file runs while it is read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(90)

# each body must be refused (the marker file must never appear)
BAD_BODIES = [
    "shell('touch {m}')", "call(shell, 'touch {m}')", "G = shell('touch {m}'), call(G)", "G = shell(x), G",
    "findall(_, shell('touch {m}'), _)", "forall(true, shell(x))", "\\+ shell(x)", "once(shell(x))",
    "catch(shell(x), _, true)", "system:shell(x)", "user:halt", "apply(shell, [x])", "maplist(shell, [x])",
    "assertz(evil)", "retract(current_user(_))", "nb_setval(k, v)", "set_prolog_flag(unknown, fail)",
    "op(700, xfx, ===)", "open('{m}', write, S), close(S)", "process_create(path(touch), ['{m}'], [])",
    "format('~@', [shell(x)])", "format(atom(A), '~@', [shell(x)]), atom(A)", "format(user_error, hi, [])",
    "sleep(30)", "thread_create(true, _, [])", "getenv('HOME', _)", "X =.. [shell, y], X",
    "aggregate_all(foo, true, _)", "setof(X, Y^shell(X, Y), _)", "'$fact'(a, b, c)",
    "with_output_to(string(_), true)", "tab(3)", "read_term(_, [])", "consult(x)",
    # format/2 reads a count before any directive: ~1@ calls its argument as ~@ does (a search for the text
    # "~@" let these load, and a guard ran the shell); a column stop or a repeat count is a text of gigabytes
    "format(atom(A), '~1@', [shell('touch {m}')]), atom(A)",
    "format(string(A), \"~*@\", [1, shell(x)]), A \\== x",
    "format(atom(A), '~`x@', [shell(x)]), atom(A)", "format(atom(A), '~999999999c', [120]), atom(A)",
    "format(atom(A), '~t~999999999|', []), atom(A)",
]


def rulebase(body: str) -> str:
    return f"fact(ok/1).\nguard('t__write', [args(A)], ( ok(A), {body} )).\n"


async def test_each_unsafe_body_is_refused_at_load_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for i, body in enumerate(BAD_BODIES):
        f = tmp_path / f"bad{i}.pl"
        f.write_text(rulebase(body.format(m=marker)))
        problems = await check_files(shared_engine(), [f])
        errors = [p for p in problems if p.severity == "error"]
        assert errors, body
        assert all(p.file == str(f) for p in errors) and any(p.line == 2 for p in errors), (body, errors)
        assert not marker.exists(), body


async def test_heads_may_not_reach_other_modules_or_internals(tmp_path: Path) -> None:
    for text, words in [
        ("user:portray(_) :- true.\n", "not user:portray"),
        ("system:term_expansion(_, _).\n", "not system:term_expansion"),
        ("'$fact'(x, 1, user).\n", "internal to Sentinel"),
        ("'$confirmed'(t, d, v, yes).\n", "internal to Sentinel"),
        ("shell(_) :- true.\n", "cannot redefine the built-in shell/1"),
    ]:
        f = tmp_path / "heads.pl"
        f.write_text(text)
        problems = await check_files(shared_engine(), [f])
        assert any(words in p.message and p.line == 1 for p in problems), (text, problems)


def test_check_command_names_file_line_and_call(tmp_path: Path) -> None:
    f = tmp_path / "policy.pl"
    f.write_text("fact(ok/1).\n\nallowed(X) :- ok(X), call(shell, 'id').\n"
                 "guard('t__w', [x = X], allowed(X)).\n")
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT))
    r = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "check", str(f)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert r.returncode == 1
    assert f"{f}:3: error: call/2 is not allowed in a rulebase" in r.stdout, r.stdout
    assert "Traceback" not in r.stderr


async def test_shipped_rulebases_pass_the_allow_list() -> None:
    problems = await check_files(shared_engine(), sorted(RULEBASES_DIR.glob("*.pl")))
    assert [p for p in problems if p.severity == "error"] == []


async def test_a_base_predicate_may_not_take_a_builtin_or_sentinel_name(tmp_path: Path) -> None:
    """A binding's look-up wrapper replaces the library's predicate of its name in the module: a binding named
    member/2 (drafted from an upstream's tool get_member) turned every member/2 of the rules into a look-up,
    and a guard's `\\+ member(X, Blocked)` held for a blocked X. Refused, naming the file and line."""
    f = tmp_path / "names.pl"
    f.write_text(
        "binding(member(A, B), tool('bk__get_member', [id = A]), extract([B = '/result']), [ttl(60)]).\n"
        "fact(humanized/2).\n"
        "askable(fact_provenance(A, B), \"Which ~w?\", text, []).\n"
        "seed(findall(a, b, c)).\n"
        "binding(member_of(A, B), tool('bk__get_member', [id = A]), extract([B = '/result']), [ttl(60)]).\n"
        "guard('bk__cancel', [id = X], require(\\+ member(X, [a, b]), 'blocked')).\n"
    )
    problems = await check_files(shared_engine(), [f])
    named = {p.line for p in problems if "cannot be named" in p.message and p.severity == "error"}
    assert named == {1, 2, 3, 4}, problems
