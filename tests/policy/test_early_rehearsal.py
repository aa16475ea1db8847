"""The rulebase rehearsal started at the beginning of ``serve`` (issue 21: beside the gateway's imports),
its verdict taken by the guard's load for the same bytes only, the same errors, and no child outliving
start-up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sentinel_mcp.policy import load_rehearsal
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.load_rehearsal import RehearsalFailed
from sentinel_mcp.policy.rulebase import RulebaseError, RulebaseHolder, content_digest

from .test_rulebase_load_bounds import _fake_swipl

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def _gone(pid: int, bound: float = 30.0) -> bool:
    """Whether ``pid`` ends within ``bound`` s (a bound on waiting, not a timing claim)."""
    end = time.monotonic() + bound
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(autouse=True)
def _fresh():
    load_rehearsal._done.clear()
    yield
    load_rehearsal._done.clear()


def test_serve_starts_the_rehearsal_before_the_gateway_is_imported(tmp_path):
    rb = tmp_path / "p.pl"
    rb.write_text("ok.\n")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"rulebases": [str(rb)], "builtins": []}}))
    env = {**os.environ, "SENTINEL_DATA_DIR": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-v", "--config", str(cfg), "serve"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=ROOT)
    assert proc.stderr is not None and proc.stdin is not None
    stages = []
    try:
        for line in proc.stderr:
            if "start-up stage: " in line:
                stages.append(line.split("start-up stage: ", 1)[1].split(" (")[0].strip())
            if "engine load ended" in line or "rulebase not loaded" in line:
                break
    finally:
        proc.stdin.close()
        proc.wait(60)
    assert "rulebase rehearsal started" in stages, stages
    # the child is started before the SDK, the engine and the built-ins are imported, and only once
    assert stages.index("rulebase rehearsal started") < stages.index("gateway imported"), stages
    assert stages.count("rulebase rehearsal started") == 1, stages
    assert stages.index("rulebase rehearsal ended") < stages.index("engine load started"), stages


async def _refusal(files: list[Path], early: bool) -> str:
    load_rehearsal._done.clear()
    if early:
        await load_rehearsal.begin(files, content_digest(files))
        assert load_rehearsal._early
    holder = RulebaseHolder(shared_engine(), files)
    with pytest.raises(RulebaseError) as e:
        await holder.reload()
    assert not load_rehearsal._early  # taken by the load
    return str(e.value)


@pytest.mark.parametrize("text", ["a(.\n", "ok.\nb :- c(\n", "x(1).\n:- dynamic 3.\ny(\n"])
async def test_a_bad_rulebase_is_refused_with_the_same_problems_when_rehearsed_early(tmp_path, text):
    f = tmp_path / "bad.pl"
    f.write_text(text)
    late = await _refusal([f], early=False)
    assert late == await _refusal([f], early=True)
    assert f"{f}:" in late and "error" in late


@pytest.mark.parametrize("body,words", [
    ("exec sleep 30", "did not finish within 1 s"),
    ("exit 3", "(exit 3)"),
    ("kill -SEGV $$", "crashed SWI-Prolog (SIGSEGV"),
])
async def test_an_early_rehearsal_that_fails_fails_the_load_as_one_started_then(tmp_path, monkeypatch, body,
                                                                                 words):
    f = tmp_path / "a.pl"
    f.write_text("a.\n")
    monkeypatch.setenv("PATH", _fake_swipl(tmp_path, body))
    key = content_digest([f])
    await load_rehearsal.begin([f], key, seconds=1.0)
    with pytest.raises(RehearsalFailed) as e:
        await load_rehearsal.rehearse([f], key=key)
    assert words in e.value.reason, e.value.reason


async def test_a_file_changed_after_the_early_rehearsal_is_rehearsed_again(tmp_path):
    f = tmp_path / "p.pl"
    f.write_text("a.\n")
    await load_rehearsal.begin([f], content_digest([f]))
    f.write_text("a(.\n")  # the early child may have read either: its verdict is not for these bytes
    holder = RulebaseHolder(shared_engine(), [f])
    with pytest.raises(RulebaseError) as e:
        await holder.reload()
    assert f"{f}:1:" in str(e.value) and "syntax error" in str(e.value)
    await load_rehearsal.discard_early()


async def test_an_early_rehearsal_read_while_its_file_changes_is_not_taken(tmp_path, monkeypatch):
    f = tmp_path / "p.pl"
    f.write_text("a.\n")
    key = content_digest([f])
    await load_rehearsal.begin([f], key)
    # the file changes and changes back around the load's own digest: the verdict stands only if the bytes
    # are still the digested ones once the child has ended
    monkeypatch.setattr("sentinel_mcp.policy.rulebase.content_digest", lambda files: "changed")
    assert await load_rehearsal._early_verdict([f], key) is None


def _ended(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:  # reaped already (asyncio's child watcher)
        return True


async def test_a_verdict_read_after_its_deadline_by_a_busy_start_is_still_taken(tmp_path):
    f = tmp_path / "p.pl"
    f.write_text("a.\n")
    key = content_digest([f])
    await load_rehearsal.begin([f], key, seconds=0.2)
    pid = load_rehearsal._early[key][1].pid
    # the event loop held (as by the gateway's imports) until the child has ended and its deadline passed
    end = time.monotonic() + 60
    while not _ended(pid) and time.monotonic() < end:
        time.sleep(0.02)
    time.sleep(0.3)
    assert await load_rehearsal.rehearse([f], key=key) == {"errors": [], "warnings": []}


def _fifo(tmp_path: Path) -> Path:
    f = tmp_path / "blocks.pl"
    os.mkfifo(f)  # no writer: the child's load waits on it for ever
    return f


async def test_a_rehearsal_no_load_took_is_killed_when_start_up_ends(tmp_path):
    f = _fifo(tmp_path)
    await load_rehearsal.begin([f], "k")
    pid = load_rehearsal._early["k"][1].pid
    assert _alive(pid)
    await load_rehearsal.discard_early()
    assert not _alive(pid)
    assert not load_rehearsal._early


def test_no_rehearsal_outlives_a_gateway_killed_during_start_up(tmp_path):
    f = _fifo(tmp_path)
    program = (
        "import asyncio, os, signal, sys\n"
        "from pathlib import Path\n"
        "from sentinel_mcp.policy import load_rehearsal\n"
        "async def main():\n"
        f"    await load_rehearsal.begin([Path({str(f)!r})], 'k')\n"
        "    print(load_rehearsal._early['k'][1].pid, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "asyncio.run(main())\n"
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert run.returncode == -signal.SIGKILL, run.stderr[-800:]
    pid = int(run.stdout.split()[0])
    assert _gone(pid), f"rehearsal child {pid} outlived its gateway"
