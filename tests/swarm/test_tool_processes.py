"""A verification tool is stopped whole: every process it started, not only the one the swarm started.

Found by red team 'swarm' 4: a tool started through a wrapper that does not ``exec`` (a ``java`` launcher
script, as version managers and distributions ship them) left the real process as the wrapper's child. At the
build's cap (or the tool's timeout) the wrapper alone was killed, and the swarm then waited for the tool's
pipes, which the child still held: a build capped at seconds ran on for as long as the child did (here 600 s,
the one build slot held), and the child outlived the build. Now each tool runs in its own process group,
killed as a group."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import (
    KOTLIN,
    TOOL_PYTHON,
    Recorded,
    alive,
    all_gone,
    kill_all,
    record_py,
    record_sh,
    recorded,
)

from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("tools_reach_tmp_path")]


def _wrapped_java(tmp_path: Path, tail: str) -> tuple[Path, Path, Path]:
    """A ``java`` wrapper (no exec) whose child is the real, hung work; both record their pids."""
    pids = tmp_path / "java.pids"
    java = tmp_path / "java"
    java.write_text(f"#!/bin/sh\n{record_sh(pids)}\nsleep 600 &\n{record_sh(pids, '$!')}\n{tail}\n")
    java.chmod(0o755)
    jar = tmp_path / "ktlint"
    jar.write_text("not a jar: never read\n")
    return java, jar, pids


def _tools(java: Path, jar: Path) -> Toolchain:
    settings = VerifySettings(kotlin=True, resources=False, java=str(java), ktlint=str(jar), timeout=900)
    return Toolchain(settings)


@pytest.mark.parametrize(
    "tail",
    [
        "wait",  # the wrapper waits for its hung child
        "exit 0",  # the wrapper is done at once; its child keeps the output open
    ],
)
async def test_a_tool_past_its_time_is_stopped_with_every_process_it_started(tmp_path, tail) -> None:
    java, jar, pids = _wrapped_java(tmp_path, tail)
    tools = _tools(java, jar)
    started: list[Recorded] = []
    try:
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=1.0), 30)
        started = recorded(pids)
        assert len(started) == 2
        if tail == "exit 0" and tools.own_pids:
            # a tool with a pid namespace of its own ends whole with its first process: its child, holding
            # the output, is killed by the kernel then, and the tool's answer (none) is read at once
            assert report.issues == [] and report.notes == [], report.notes
        else:
            assert report.issues == [] and any("did not finish" in n for n in report.notes), report.notes
        assert all_gone(started), [p for p in started if alive(p)]
    finally:
        kill_all(started or recorded(pids))


async def test_a_build_cancelled_while_its_tool_runs_leaves_no_process(tmp_path) -> None:
    java, jar, pids = _wrapped_java(tmp_path, "wait")
    tools = _tools(java, jar)
    check = asyncio.create_task(tools.check_kotlin(KOTLIN, within=600.0))
    started: list[Recorded] = []
    try:
        while len(started) < 2:
            await asyncio.sleep(0.02)
            started = recorded(pids)
        check.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(check, 30)
        assert all_gone(started), [p for p in started if alive(p)]
    finally:
        kill_all(started)


async def test_a_tools_output_is_read_within_a_bound(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool's output is read to a bound (it was read whole: a tool that printed without end filled the
    gateway's memory before its timeout); past it the tool is stopped and its file noted as not checked."""
    from sentinel_mcp.swarm import toolchain

    monkeypatch.setattr(toolchain, "MAX_TOOL_OUTPUT_BYTES", 64 * 1024)
    pids = tmp_path / "java.pids"
    java = tmp_path / "java"
    java.write_text(f"#!/bin/sh\n{record_sh(pids)}\nhead -c 1000000 /dev/zero\nexec sleep 600\n")
    java.chmod(0o755)
    (tmp_path / "ktlint").write_text("not a jar\n")
    try:
        tools = _tools(java, tmp_path / "ktlint")
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 30)
        assert report.issues == [] and any("did not finish" in n and "output" in n for n in report.notes), (
            report.notes
        )
        left = recorded(pids)
        assert all_gone(left), [p for p in left if alive(p)]
    finally:
        kill_all(recorded(pids))


async def test_a_tool_is_not_given_the_gateways_secrets(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool reads what the models wrote (a parser fed hostile input): it runs with what it needs to run
    (PATH, HOME, the locale, JAVA_HOME), not the gateway's environment, where the model endpoint's key and
    other secrets are (it was given all of it)."""
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "sk-secret-0123456789")
    monkeypatch.setenv("SENTINEL_SOME_TOKEN", "tok-secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    seen = tmp_path / "env.txt"
    java = tmp_path / "java"
    java.write_text(f"#!/bin/sh\nenv > {seen}\necho '[]'\n")
    java.chmod(0o755)
    (tmp_path / "ktlint").write_text("not a jar\n")
    await asyncio.wait_for(_tools(java, tmp_path / "ktlint").check_kotlin(KOTLIN, within=600.0), 30)
    env = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    leaked = sorted({"SWARM_OPENAI_API_KEY", "SENTINEL_SOME_TOKEN"} & set(env))
    assert leaked == []
    assert (env.get("PATH") == os.environ["PATH"], env.get("LANG")) == (True, "C.UTF-8")


async def test_a_tool_that_ends_leaves_no_process_behind(tmp_path) -> None:
    """Found by red team 'swarm' (rt-swarm): a tool that answered and ended normally while a process it
    started lived on, its output closed (a daemon, as build tools start them; here one in the tool's group and
    one that moved to a group of its own), left that process running after the check, for ever: only a tool
    stopped at its time or cancelled was stopped whole. Now what is left of the tool's session is stopped
    when it ends."""
    pids = tmp_path / "java.pids"
    java = tmp_path / "java"
    own_group = f"import os, time; os.setpgid(0, 0); {record_py(pids)}; time.sleep(600)"
    java.write_text(
        f"#!/bin/sh\nsleep 600 </dev/null >/dev/null 2>&1 &\n{record_sh(pids, '$!')}\n"
        f'{TOOL_PYTHON} -c "{own_group}" </dev/null >/dev/null 2>&1 &\n'
        f"while [ $(wc -l < {pids}) -lt 2 ]; do sleep 0.01; done\necho '[]'\nexit 0\n"
    )
    java.chmod(0o755)
    (tmp_path / "ktlint").write_text("not a jar\n")
    left: list[Recorded] = []
    try:
        tools = _tools(java, tmp_path / "ktlint")
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 30)
        assert report.issues == [] and report.notes == [], report.notes
        left = recorded(pids)
        assert len(left) == 2
        assert all_gone(left), [p for p in left if alive(p)]
    finally:
        kill_all(recorded(pids))


async def test_a_tool_writes_within_a_bound_and_dumps_no_core(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by red team 'swarm' (rt-swarm): a tool ran with the gateway's own limits, so one that wrote
    without end (or a JVM that crashed and dumped its core) filled the disk for as long as its time ran. Now
    each file a tool writes is bounded (the kernel's RLIMIT_FSIZE, set before the tool runs, so its children
    have it too) and it dumps no core."""
    from sentinel_mcp.swarm import toolchain

    monkeypatch.setattr(toolchain, "MAX_TOOL_FILE_BYTES", 1024 * 1024)
    seen = tmp_path / "seen.txt"
    java = tmp_path / "java"
    java.write_text(
        f"#!/bin/sh\nhead -c 5000000 /dev/zero > big.bin\nwc -c < big.bin > {seen}\nulimit -c >> {seen}\n"
        "echo '[]'\n"
    )
    java.chmod(0o755)
    (tmp_path / "ktlint").write_text("not a jar\n")
    report = await asyncio.wait_for(_tools(java, tmp_path / "ktlint").check_kotlin(KOTLIN, within=600.0), 30)
    assert report.issues == [], report.issues
    written, core = seen.read_text().split()
    assert (int(written), core) == (1024 * 1024, "0")


async def test_a_tool_does_not_outlive_the_process_that_ran_it(tmp_path) -> None:
    """Found by red team 'swarm' (rt-swarm): a tool runs in a session of its own (so it can be stopped whole),
    so when the gateway running the build was killed (kill -9, the OOM killer), a hung tool went on for its
    whole timeout (up to 15 minutes, a JVM's CPU and memory), parented to init. Now the kernel kills it with
    the process that started it (PR_SET_PDEATHSIG, set before the tool runs); what a launcher that does not
    exec left running is stopped by the tool's supervisor (test_tool_caps.py)."""
    java, jar, pids = _wrapped_java(tmp_path, "wait")
    runner = (
        "import asyncio, sys\n"
        "from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings\n"
        f"s = VerifySettings(kotlin=True, resources=False, java={str(java)!r}, ktlint={str(jar)!r},"
        " timeout=900)\n"
        f"asyncio.run(Toolchain(s).check_kotlin({KOTLIN!r}, within=600.0))\n"
    )
    gateway = subprocess.Popen([sys.executable, "-c", runner], env=dict(os.environ, PYTHONPATH=os.getcwd()))
    started: list[Recorded] = []
    try:
        for _ in range(3000):  # bounded by count: until the tool and its child have both started
            started = recorded(pids)
            if len(started) == 2 or gateway.poll() is not None:
                break
            time.sleep(0.01)
        assert len(started) == 2, gateway.poll()
        gateway.kill()
        gateway.wait(30)
        assert all_gone(started[:1], looks=1000), [p for p in started if alive(p)]
    finally:
        gateway.kill()
        kill_all(started)
