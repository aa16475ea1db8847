"""Adding a rulebase file can only add conditions: no file redefines Sentinel's runtime or its policy
constructs, a rule predicate belongs to one file, a declaration (guard/3 too) never has a body that would run
at load, and the texts of questions and confirmations are templates that only print their arguments.
A file that would crash SWI-Prolog's reader or never finish loading costs a child process (the rehearsal),
never the gateway. Every check goes through the real loader (`check_files`, the shared engine)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sentinel_mcp.policy import load_rehearsal
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.load_rehearsal import RehearsalFailed

pytestmark = pytest.mark.timeout(120)
DEEP = 60_000  # well past what crashes the reader on an 8 MB stack


async def errors_of(*files: Path) -> list[str]:
    return [str(p) for p in await check_files(shared_engine(), list(files)) if p.severity == "error"]


def write(tmp_path: Path, name: str, text: str) -> Path:
    f = tmp_path / name
    f.write_text(textwrap.dedent(text))
    return f


# ---- Sentinel's own predicates ----------------------------------------------------------------------------
@pytest.mark.parametrize("clause", [
    "now(0).", "now(T) :- T = 0.", "option_value(_, _, _, ok).", "iso_date_before(_, _).",
    "iso_hours_between(_, _, 0).", "json_get(_, _, x).", "fact_provenance(_, user).",
    "context_value(role, admin).",
    "call_tool_name(x).", "answer_label(_, _, yes).", "humanized(_, x).",
    "require(_, _).", "require(_, _, _) :- true.", "confirmed(_, _).", "confirmed(_, _, _).",
    "confirmed_items(_, _).", "confirmed_items(_, _, _).",
])
async def test_a_file_cannot_redefine_what_sentinel_provides(tmp_path, clause):
    shared = write(tmp_path, "shared.pl", f"% a shared helper file\n{clause}\n")
    errors = await errors_of(shared)
    name = clause.split("(")[0]
    assert any(":2: error: cannot redefine Sentinel's " + name in e for e in errors), errors


async def test_a_shadowing_file_beside_a_strict_one_is_refused_and_the_strict_one_alone_loads(tmp_path):
    strict = write(tmp_path, "strict.pl", """\
        guard(rec__do, [mark = M], require((now(T), T < 1000), 'closed after the deadline')).
        """)
    shadow = write(tmp_path, "shared.pl", "now(0).\n")
    assert await errors_of(strict) == []
    errors = await errors_of(strict, shadow)
    assert errors == [f"{shadow}:1: error: cannot redefine Sentinel's now/1 (its runtime and policy "
                      "constructs are its own)"], errors


# ---- a predicate belongs to one file ----------------------------------------------------------------------
@pytest.mark.parametrize("widening", ["admin(_).", "admin(X) :- atom(X).", "admin(guest).\nadmin(_)."])
async def test_a_second_file_cannot_add_clauses_to_a_predicate_of_the_first(tmp_path, widening):
    strict = write(tmp_path, "a_strict.pl", """\
        admin(root).
        guard(rec__do, [mark = M], require(admin(M), 'admins only')).
        """)
    helper = write(tmp_path, "b_helper.pl", f"% helpers\n{widening}\n")
    errors = await errors_of(strict, helper)
    expected = f"{helper}:2: error: admin/1 also has clauses in {strict} (line 1)"
    assert any(e.startswith(expected) for e in errors), errors
    assert await errors_of(strict) == []


async def test_files_with_predicates_of_their_own_still_compose(tmp_path):
    a = write(tmp_path, "a.pl", "admin(root).\nguard(rec__do, [mark = M], require(admin(M), 'admins')).\n")
    b = write(tmp_path, "b.pl", "owner(mia).\nguard(rec__do, [who = W], require(owner(W), 'owners')).\n")
    assert await errors_of(a, b) == []


# ---- declarations are facts -------------------------------------------------------------------------------
@pytest.mark.parametrize("clause", [
    "guard(rec__other, [], true) :- spin(1).",
    "guard(T, [], true) :- member(T, [a, b]).",
    "guard(rec__other, [], true) :- true.",
])
async def test_a_guard_with_a_body_is_refused_it_would_run_at_load(tmp_path, clause):
    f = write(tmp_path, "loop.pl", f"spin(X) :- spin(X).\n{clause}\n")
    errors = await asyncio.wait_for(errors_of(f), 60)
    assert any(f"{f}:2: error: the declaration guard/3 is a fact, not a rule" in e for e in errors), errors


# ---- texts are templates that print their arguments only --------------------------------------------------
@pytest.mark.parametrize("template", [
    "Run ~@?", "~t~400000000|x", "~999999999c", "~*c", "~`-t~30|", "~c", "~r", "~8|", "~+", "bad ~", "~21f",
    "~e and ~@",
])
@pytest.mark.parametrize("where", ["askable", "confirmed"])
async def test_a_template_that_could_run_a_goal_or_grow_without_bound_is_refused(tmp_path, template, where):
    q = "'" + template.replace("'", "''") + "'"
    clause = (f"askable(ok(X, A), {q}, text, [from([user])]).\n" if where == "askable"
              else f"g(X) :- confirmed({q}, [X]).\n")
    f = write(tmp_path, "texts.pl", "% texts\n" + clause)
    errors = await asyncio.wait_for(errors_of(f), 30)  # the template is never run, so this is quick
    assert any(f"{f}:2: error:" in e and "is not allowed in a text" in e for e in errors), errors


async def test_a_confirmation_text_computed_from_data_is_refused(tmp_path):
    f = write(tmp_path, "computed.pl", "% a message from the caller\ng(X, M) :- confirmed(M, [X]).\n")
    errors = await errors_of(f)
    assert any(":2: error:" in e and "written in the rulebase" in e for e in errors), errors


async def test_plain_templates_load(tmp_path):
    f = write(tmp_path, "fine.pl", """\
        askable(ok(X, A), 'Is ~w fine (~~ about ~2f)?', text, [from([user])]).
        g(X) :- confirmed("Send ~w (~a, ~q, ~d)?", [X, a, b, 3]).
        """)
    assert await errors_of(f) == []


# ---- the rehearsal: a crash or a load without end costs a child process -----------------------------------
# (a term too deep past the Python bounds: test_rulebase_load_bounds.py, read and stored)


async def test_a_rehearsal_past_its_deadline_is_refused_and_its_child_is_gone(tmp_path):
    f = write(tmp_path, "ok.pl", "ok(1).\n")
    with pytest.raises(RehearsalFailed, match="did not finish within"):
        await load_rehearsal.rehearse([f], seconds=0.001)
    assert (await load_rehearsal.rehearse([f]))["errors"] == []


def test_the_child_gets_less_c_stack_than_the_engine_thread():
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    if soft not in (resource.RLIM_INFINITY, -1):
        assert load_rehearsal.child_c_stack() <= soft // 4 or load_rehearsal.child_c_stack() == \
            load_rehearsal.MIN_C_STACK


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_rulebase_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path, kind):
    import os
    path = tmp_path / "rb.pl"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], "data_dir": str(tmp_path)}}))
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "check", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and f"{path}:0: error:" in run.stdout, run.stdout + run.stderr


async def test_a_predicate_shared_by_files_is_declared_multifile_in_each_of_them(tmp_path):
    a = write(tmp_path, "a.pl", ":- multifile cap/2.\ncap(steps, 25).\n")
    b_consents = write(tmp_path, "b.pl", ":- multifile cap/2.\ncap(steps, 10).\n")
    assert await errors_of(a, b_consents) == []
    b_silent = write(tmp_path, "c.pl", "% no declaration\ncap(steps, 10).\n")
    errors = await errors_of(a, b_silent)
    assert any(f"{b_silent}:2: error: cap/2 also has clauses" in e for e in errors), errors
    # a second file cannot open the first's predicate by declaring it itself
    strict = write(tmp_path, "d.pl",
                   "admin(root).\nguard(rec__do, [mark = M], require(admin(M), 'admins')).\n")
    opener = write(tmp_path, "e.pl", ":- multifile admin/1.\nadmin(_).\n")
    errors = await errors_of(strict, opener)
    assert any(f"{opener}:2: error: admin/1 also has clauses in {strict}" in e for e in errors), errors
    bad = write(tmp_path, "f.pl", ":- multifile admin.\n")
    assert any(":1: error: multifile needs Name/Arity" in e for e in await errors_of(bad))
