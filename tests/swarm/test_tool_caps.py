"""A verification tool's processes and memory are capped, and nothing it starts outlives it or the gateway.

Found by red team 'swarm' 2 (rt-swarm2): a tool ran with no cap on its process count (``RLIMIT_NPROC`` is per
user, and nothing as root) or its memory (none: a JVM's heap was its default, a quarter of the machine), and
only its session was swept when it ended, so a process that called ``setsid`` (a daemon, a double fork)
outlived the build, and the gateway; when the gateway was killed, the kernel's death signal reached the tool's
first process only. Now each tool runs in a cgroup of its own (``pids`` and ``memory`` capped, every process
of it killed however it ends), under a supervisor that kills the whole cgroup when the gateway dies."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import (
    KOTLIN,
    TOOL_PYTHON,
    all_gone,
    alive,
    kill_all,
    Recorded,
    record_py,
    record_sh,
    recorded,
    script_tools,
)

from sentinel_mcp.swarm.tool_cgroup import caps_here, tool_cgroup
from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings

pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("tools_reach_tmp_path")]

CAPS = caps_here()
needs_cgroup = pytest.mark.skipif(CAPS is None, reason="no cgroup is given to this process here")


def _python(body: str) -> str:
    return f"#!{TOOL_PYTHON}\nimport os, sys, time\n{body}\n"


def _record(pids: Path) -> str:
    return record_py(pids)


@needs_cgroup
@pytest.mark.skipif(CAPS is not None and "pids" not in CAPS, reason="no pids controller here")
async def test_a_fork_bomb_is_stopped_at_the_process_cap(tmp_path) -> None:
    pids = tmp_path / "pids"
    # each child leaves the session (the sweep of it would not see them); the parent forks on, a bounded
    # number of times, and then waits: only the cap stops it
    bomb = _python(
        "for _ in range(2000):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        f"            os.setsid(); {_record(pids)}; time.sleep(600); os._exit(0)\n"
        "    except OSError:\n"
        "        pass\n"
        "time.sleep(600)"
    )
    tools = script_tools(tmp_path, bomb, max_processes=16)
    try:
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 60)
        assert report.notes == ["ktlint did not finish: stopped: its processes reached the cap of 16"], (
            report.notes
        )
        started = recorded(pids)
        assert 0 < len(started) < 16
        assert all_gone(started), [p for p in started if alive(p)]
    finally:
        kill_all(recorded(pids))


@needs_cgroup
@pytest.mark.skipif(CAPS is not None and "memory" not in CAPS, reason="no memory controller here")
async def test_a_memory_hog_is_stopped_at_the_memory_cap(tmp_path) -> None:
    pids = tmp_path / "pids"
    hog = _python(
        f"{_record(pids)}\n"
        "child = os.fork()\n"
        "if child == 0:\n"
        f"    {_record(pids)}\n"
        "    held = [b'x' * (16 << 20) for _ in range(64)]\n"  # 1 GiB, each page written
        "    os._exit(0)\n"
        "os.waitpid(child, 0)\n"
        "time.sleep(600)"
    )
    tools = script_tools(tmp_path, hog, max_memory_mb=64)
    try:
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 60)
        assert report.notes == ["ktlint did not finish: stopped: its memory reached the cap of 64 MiB"], (
            report.notes
        )
        started = recorded(pids)
        assert len(started) == 2
        assert all_gone(started), [p for p in started if alive(p)]
    finally:
        kill_all(recorded(pids))


DAEMONS = {
    # a process of its own session, started by a shell and left running when the tool answered
    "setsid": (
        '#!/bin/sh\n{python} -c "import os, time; os.setsid(); {record}; time.sleep(600)" '
        "</dev/null >/dev/null 2>&1 &\nwhile [ ! -s {pids} ]; do sleep 0.01; done\necho '[]'\n"
    ),
    # the classic daemon: fork, setsid, fork again; the middle process ends, the grandchild is init's
    "double fork": _python(
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        os.close(1); os.close(2)\n"
        "        {record}; time.sleep(600)\n"
        "    os._exit(0)\n"
        "while not os.path.getsize({pids!r}) if os.path.exists({pids!r}) else True:\n"
        "    time.sleep(0.01)\n"
        "print('[]')"
    ),
}


@needs_cgroup
@pytest.mark.parametrize("daemon", sorted(DAEMONS))
async def test_a_daemon_that_left_the_tools_session_does_not_outlive_it(tmp_path, daemon) -> None:
    pids = tmp_path / "pids"
    script = DAEMONS[daemon].format(python=TOOL_PYTHON, record=_record(pids), pids=str(pids))
    tools = script_tools(tmp_path, script)
    try:
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 60)
        assert report.issues == [] and report.notes == [], report.notes
        started = recorded(pids)
        assert len(started) == 1
        assert all_gone(started), [p for p in started if alive(p)]
    finally:
        kill_all(recorded(pids))


@pytest.mark.parametrize("cgroup", [True, False], ids=["in its cgroup", "no cgroup"])
async def test_nothing_a_tool_started_outlives_the_gateway(tmp_path, cgroup) -> None:
    """The gateway killed (kill -9) while a tool runs through a launcher script that does not exec, its work
    a child, and a daemon of its own session: none of them is left. Found in the tool's cgroup, and on a
    machine that gives none (the supervisor, the tool's subreaper, kills its descendants)."""
    if cgroup and CAPS is None:
        pytest.skip("no cgroup is given to this process here")
    pids = tmp_path / "pids"
    script = (
        f"#!/bin/sh\n{record_sh(pids)}\nsleep 600 &\n{record_sh(pids, '$!')}\n"
        f'{TOOL_PYTHON} -c "import os, time; os.setsid(); {_record(pids)}; time.sleep(600)" '
        "</dev/null >/dev/null 2>&1 &\nwait\n"
    )
    (tmp_path / "java").write_text(script)
    (tmp_path / "java").chmod(0o755)
    (tmp_path / "ktlint").write_text("not a jar\n")
    runner = (
        "import asyncio, sys\n"
        "from sentinel_mcp.swarm import toolchain\n"
        "from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings\n"
        + ("" if cgroup else "toolchain.tool_cgroup = lambda *_: None\n")
        + f"s = VerifySettings(kotlin=True, resources=False, java={str(tmp_path / 'java')!r}, "
        f"ktlint={str(tmp_path / 'ktlint')!r}, timeout=900)\n"
        f"asyncio.run(Toolchain(s).check_kotlin({KOTLIN!r}, within=600.0))\n"
    )
    gateway = subprocess.Popen([sys.executable, "-c", runner], env=dict(os.environ, PYTHONPATH=os.getcwd()))
    started: list[Recorded] = []
    try:
        for _ in range(3000):  # bounded by count: until the script, its child and the daemon have started
            started = recorded(pids)
            if len(started) == 3 or gateway.poll() is not None:
                break
            await asyncio.sleep(0.01)
        assert len(started) == 3, gateway.poll()
        gateway.kill()
        gateway.wait(30)
        assert all_gone(started, looks=1000), [p for p in started if alive(p)]
    finally:
        gateway.kill()
        kill_all(recorded(pids))


@needs_cgroup
async def test_a_cgroup_left_by_a_dead_gateway_is_stopped_and_removed_by_the_next_tool(tmp_path) -> None:
    """A gateway killed while its supervisor was killed too (both kill -9) leaves its tool's cgroup, and
    what runs in it: the next tool run on the machine kills those and removes it."""
    # the stand-in gateway lives until its tool is in the cgroup: a tool run by another test meanwhile (the
    # suite runs in parallel) would otherwise sweep the cgroup of a gateway already dead before it was filled
    gateway = subprocess.Popen(["sleep", "600"])
    left = tool_cgroup(64, 256 * 1024 * 1024, gateway=gateway.pid)
    assert left is not None
    orphan = subprocess.Popen(["sleep", "600"])
    try:
        for procs in left.procs_files():
            Path(procs).write_text(str(orphan.pid))
        gateway.kill()
        gateway.wait()
        tools = script_tools(tmp_path, "#!/bin/sh\necho '[]'\n")
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 60)
        assert report.notes == [], report.notes
        assert orphan.wait(30) == -9
        # its cgroup, busy while its process exited, is removed by the next tool's look (once it is reaped)
        await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 60)
        assert not any(d.exists() for d in left.dirs)
    finally:
        gateway.kill()
        gateway.wait()
        orphan.kill()
        orphan.wait()
        left.kill()
        left.remove()


@needs_cgroup
async def test_a_dead_gateways_cgroup_is_stopped_though_its_pid_was_reused(tmp_path) -> None:
    """Found by red team 'swarm' 4: a cgroup was stale only when no process had its gateway's pid, so a dead
    gateway's pid taken by another process kept its cgroup, and the tool running in it, for good. Now it is
    named for the pid and that process's start time, and stale unless both match a running process. Here a
    running process holds the pid, and the name carries another start time: that of the dead gateway."""
    reuser = subprocess.Popen(["sleep", "600"])
    orphan = subprocess.Popen(["sleep", "600"])
    left = tool_cgroup(64, 256 * 1024 * 1024, gateway=reuser.pid)
    assert left is not None
    try:
        named = left.dirs[0].name.split("-")
        assert named[2] == str(reuser.pid), named  # sentinel-tool-PID-STARTTIME-N
        dead = f"sentinel-tool-{reuser.pid}-{int(named[3]) - 1}-{named[4]}"
        left.dirs = [d.rename(d.with_name(dead)) for d in left.dirs]
        for procs in left.procs_files():
            Path(procs).write_text(str(orphan.pid))
        tools = script_tools(tmp_path, "#!/bin/sh\necho '[]'\n")
        report = await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 60)
        assert report.notes == [], report.notes
        assert orphan.wait(30) == -9
        await asyncio.wait_for(tools.check_kotlin(KOTLIN, within=600.0), 60)
        assert not any(d.exists() for d in left.dirs)
        assert reuser.poll() is None  # the process that took the pid is not the gateway's: left alone
    finally:
        for p in (reuser, orphan):
            p.kill()
            p.wait()
        left.kill()
        left.remove()


@pytest.mark.skipif(not (shutil.which("java") and shutil.which("javac")), reason="no JDK here")
async def test_a_jvms_heap_is_capped_whatever_its_environment_says(tmp_path, monkeypatch) -> None:
    """A JVM ran with its default heap (a quarter of the machine's memory); now its heap is half the tool's
    memory cap, set on its command line, and options in the gateway's environment do not reach it."""
    for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS"):
        monkeypatch.setenv(name, "-Xmx3g")
    out = tmp_path / "heap.txt"
    (tmp_path / "Heap.java").write_text(
        "public class Heap { public static void main(String[] a) throws Exception {\n"
        f"  java.nio.file.Files.writeString(java.nio.file.Path.of({json.dumps(str(out))}),\n"
        "    Long.toString(Runtime.getRuntime().maxMemory()));\n"
        '  System.out.println("[]"); } }\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OPTIONS")}
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), str(tmp_path / "Heap.java")], check=True, env=env)
    jar = tmp_path / "heap.jar"
    subprocess.run(
        ["jar", "--create", "--file", str(jar), "--main-class", "Heap", "-C", str(classes), "."],
        check=True,
        env=env,
    )
    settings = VerifySettings(
        kotlin=True, resources=False, java=shutil.which("java"), ktlint=str(jar), max_memory_mb=256
    )
    report = await asyncio.wait_for(Toolchain(settings).check_kotlin(KOTLIN, within=600.0), 60)
    assert report.notes == [], report.notes
    assert int(out.read_text()) <= 128 * 1024 * 1024
