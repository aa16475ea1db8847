"""The load of a rulebase is bounded as a whole, and what one file may define is read off the code
(test_rulebase_integrity.py has the rest): the engine's load runs within an inference limit (a load that runs
on is an error naming the file, never a held engine), so does the rehearsal's; a builtin a guard may call
(member/2, ...) cannot be redefined any more than Sentinel's own; a reload has a deadline, and one that fails
leaves the last good rulebase in charge and says so (``reload_problem``, /healthz degraded)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.policy import load_rehearsal
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.load_rehearsal import RehearsalFailed
from sentinel_mcp.policy.rulebase import RulebaseError, RulebaseHolder

pytestmark = pytest.mark.timeout(120)
MANY = "".join(f"r{i}(X) :- member(X, [a, b]).\n" for i in range(300))


def call(name: str) -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments={}, session_id="s1")


async def errors_of(*files: Path) -> list[str]:
    return [str(p) for p in await check_files(shared_engine(), list(files)) if p.severity == "error"]


# ---------------------------------------------------------------- the whole load is bounded

async def test_the_engines_load_is_bounded_and_names_the_file(tmp_path):
    f = tmp_path / "many.pl"
    f.write_text(MANY)
    out = await shared_engine().load("rb_bounded_test", [str(f)], limit=20_000)
    await shared_engine().unload("rb_bounded_test")
    (err,) = out["errors"]
    assert err["file"] == str(f) and "did not finish within 20,000 inferences" in err["message"], err
    out = await shared_engine().load("rb_bounded_test", [str(f)])  # the engine answers afterwards
    await shared_engine().unload("rb_bounded_test")
    assert out["errors"] == []


async def test_the_rehearsal_loads_within_the_same_limit(tmp_path, monkeypatch):
    f = tmp_path / "many.pl"
    f.write_text(MANY)
    monkeypatch.setattr(load_rehearsal, "LOAD_INFERENCE_LIMIT", 20_000)
    found = await load_rehearsal.rehearse([f])
    assert [(e["file"], "did not finish within 20,000 inferences" in e["message"]) for e in found["errors"]] \
        == [(str(f), True)], found


# ---------------------------------------------------------------- builtins a guard may call

@pytest.mark.parametrize("clause", ["member(_, _).", "memberchk(X, [X]).", "append(_, _, _).",
                                    "format(_, _, _).", "last(_, x).", "sort(X, X).", "atom_length(_, 1).",
                                    "between(_, _, _).", "nth1(_, _, _).", "sum_list(_, 0) :- true."])
async def test_no_file_redefines_a_builtin_a_guard_may_call(tmp_path, clause):
    strict = tmp_path / "strict.pl"
    strict.write_text("guard(t__x, [v = V], require(member(V, [a]), 'a only')).\n")
    shared = tmp_path / "shared.pl"
    shared.write_text(f"% helpers\n{clause}\n")
    errors = await errors_of(strict, shared)
    name = clause.split("(")[0]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{shared}:2: error: cannot redefine the built-in {name}/"), errors


async def test_a_predicate_in_three_files_is_reported_once_in_each_later_file(tmp_path):
    files = []
    for name, text in (("a.pl", "admin(root).\n"), ("b.pl", "x.\nadmin(_).\n"),
                       ("c.pl", "admin(bob) :- true.\n")):
        files.append(tmp_path / name)
        files[-1].write_text(text)
    errors = sorted(e.split(": error: ")[0] for e in await errors_of(*files))
    assert errors == [f"{files[1]}:2", f"{files[2]}:1"], errors


# ---------------------------------------------------------------- what the rehearsal catches

@pytest.mark.parametrize("deep", [
    "helper(16'FF, " + "f(" * 60_000 + "x" + ")" * 60_000 + ", 16'FF).",
    "helper(" + "[" * 60_000 + "]" * 60_000 + ").",
    "d :- " + "\\+ " * 60_000 + "true.",
])
def test_past_the_python_bounds_a_deep_term_is_an_error_with_its_line(tmp_path, deep):
    """A term read, or a body stored (assertz recurses on the C stack too), too deep: the child reports the
    clause's line; the gateway's engine never reads it."""
    bad = tmp_path / "deep.pl"
    bad.write_text(f"ok.\n{deep}\nafter.\n")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], "data_dir": str(tmp_path)}}))
    program = (
        "import sys, sentinel_mcp.policy.rulebase as r\n"
        "r.clause_problems = lambda f: []\n"
        "from sentinel_mcp.cli import main\n"
        f"sys.argv = ['sentinel-mcp', '-c', {str(cfg)!r}, 'check', {str(bad)!r}]\n"
        "sys.exit(main())\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=100)
    assert run.returncode == 1, (run.returncode, run.stdout[-500:], run.stderr[-500:])
    assert f"{bad}:2: error: a term nested too deep to" in run.stdout, run.stdout[-800:]


def _fake_swipl(tmp_path: Path, body: str) -> str:
    """PATH with a ``swipl`` first that runs ``body`` (sh)."""
    d = tmp_path / "bin"
    d.mkdir()
    exe = d / "swipl"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return f"{d}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.mark.parametrize("body,words", [
    ("exec sleep 30", "did not finish within 1 s"),
    ("exit 3", "(exit 3)"),
    ("echo 'not json'; exit 0", "could not be read"),
    ("echo '{\"errors\": 1}'; exit 0", "could not be read"),
    ("kill -KILL $$", "crashed SWI-Prolog (SIGKILL"),
    ("kill -SEGV $$", "crashed SWI-Prolog (SIGSEGV"),
])
async def test_a_child_that_does_not_finish_well_fails_the_rehearsal(tmp_path, monkeypatch, body, words):
    f = tmp_path / "a.pl"
    f.write_text("a.\n")
    monkeypatch.setenv("PATH", _fake_swipl(tmp_path, body))
    with pytest.raises(RehearsalFailed) as e:
        await load_rehearsal.rehearse([f], seconds=1.0)
    assert words in e.value.reason, e.value.reason


# ---------------------------------------------------------------- a reload has a deadline

async def test_a_reload_that_does_not_finish_in_time_fails_and_the_next_one_loads(tmp_path, monkeypatch):
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [], true).\n")
    g = await make_guard(None, tmp_path / "facts.db", files=[f])
    try:
        v1 = g.version
        real_path = os.environ.get("PATH", "")
        monkeypatch.setenv("PATH", _fake_swipl(tmp_path, "exec sleep 60"))
        g.rulebases.load_seconds = 1.0
        f.write_text("guard('t__ok', [], fail).\n")
        assert await g.rulebases.reload(cause="hot reload") is False
        assert g.version == v1 and isinstance(await g.decide(call("t__ok")), Allow)  # the last good one
        assert f"{f}:0: error: loading did not finish within 1 s" in (g.rulebases.last_error or "")
        assert g.reload_problem and "stays in charge" in g.reload_problem and str(f) in g.reload_problem
        assert g.problem is None  # it governs (the last good rulebase), and /healthz says degraded
        monkeypatch.setenv("PATH", real_path)
        g.rulebases.load_seconds = 120.0
        assert await g.rulebases.reload(cause="hot reload") is True  # the lock was let go
        assert g.version != v1 and g.reload_problem is None
        assert isinstance(await g.decide(call("t__ok")), Deny)
    finally:
        await g.close()


async def test_a_first_load_past_the_deadline_is_an_error_and_nothing_is_loaded(tmp_path, monkeypatch):
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [], true).\n")
    monkeypatch.setenv("PATH", _fake_swipl(tmp_path, "exec sleep 60"))
    holder = RulebaseHolder(shared_engine(), [f])
    holder.load_seconds = 0.5
    with pytest.raises(RulebaseError) as e:
        await holder.reload()
    assert "did not finish within 0.5 s" in str(e.value) and not holder.loaded


# ---------------------------------------------------------------- shipped: stays inside the shipped files

def _config(tmp_path: Path, **sentinel: object) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"builtins": [], **sentinel}}))
    return cfg


@pytest.mark.parametrize("bad", ["shipped:", "shipped:/etc/passwd", "shipped:../secret.pl",
                                 "shipped:rulebases/../../x.pl", "shipped:rulebases/../../../etc/passwd"])
def test_shipped_cannot_leave_the_shipped_folder(tmp_path, bad):
    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path, rulebases=["shipped:rulebases/default.pl", bad]))
    assert "rulebases[1]" in str(e.value)


@pytest.mark.parametrize("key", ["data_dir", "store"])
def test_state_is_never_kept_among_shipped_files(tmp_path, key):
    with pytest.raises(ConfigError) as e:
        load_config(_config(tmp_path, **{key: "shipped:rulebases"}))
    assert key in str(e.value)
