"""What a verification tool writes outside its workspace does not outlive it, nor reach another tool.

Found by red team 'swarm' 5: each run has a uid of its own, but a uid comes back. A tool (hostile code)
wrote ``/tmp/x`` (or in ``/var/tmp``, ``/dev/shm``, any world-writable directory of the machine); the next run
leased that uid read it (a channel from one build to a later one; the same with a file made world-readable,
to any tool at once). Now a root gateway gives each tool a mount namespace of its own: everything read-only
but its workspace, and its own empty ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (``tool_files.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.swarm.support.tool_processes import KOTLIN, TOOL_PYTHON, script_tools

from sentinel_mcp.swarm.tool_files import PRIVATE, files_here, kept_dirs

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.usefixtures("tools_reach_tmp_path"),
    pytest.mark.skipif(not files_here(), reason="no mount namespace for tools here (not root, or refused)"),
]

# a range of this file's own, of one uid: both runs are given the same
_ONE_UID = {"tool_uid_first": 1_991_000_000, "tool_uid_count": 1}


async def _ran(tmp_path: Path, script: str, name: str) -> str:
    """What the tool said, run with the one uid of the range: looked at again (a bounded number of times)
    while a process of the run before still has it (its last process exiting: the uid is not leased)."""
    for _ in range(1000):  # the other test of this range may run at once (xdist)
        tools = script_tools(tmp_path, script, name=name, **_ONE_UID)
        notes = " ".join((await tools.check_kotlin(KOTLIN)).notes)
        if "is free" not in notes:
            return notes
        await asyncio.sleep(0.02)
    return notes


async def test_what_a_tool_left_in_tmp_is_not_there_for_the_next_run_of_its_uid(tmp_path) -> None:
    name = f"sentinel-left-{uuid.uuid4().hex}"
    left = [Path(p) / name for p in PRIVATE if os.path.isdir(p)]
    writer = (
        "#!/bin/sh\numask 077\n"
        + "".join(f"echo secret > {p} && echo wrote {p}\n" for p in left)
        + "id -u\nexit 1\n"
    )
    reader = "#!/bin/sh\n" + "".join(f"cat {p} 2>/dev/null && echo BROKE {p}\n" for p in left)
    reader += "id -u\nexit 1\n"
    try:
        wrote = await _ran(tmp_path, writer, "w")
        read = await _ran(tmp_path, reader, "r")
    finally:
        for p in left:  # left on the machine's own places by a run without the namespace (main)
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
    assert all(f"wrote {p}" in wrote for p in left), wrote  # its own places were writable
    assert "BROKE" not in read and "secret" not in read, read
    assert wrote.split()[-1] == read.split()[-1] == str(_ONE_UID["tool_uid_first"]), (wrote, read)
    assert not any(p.exists() for p in left)


async def test_a_tool_can_write_nowhere_but_its_workspace_and_its_own_tmp(tmp_path) -> None:
    """A world-writable directory elsewhere on the machine (here one the test makes under /run) is
    read-only to it; its workspace (its working directory) is not."""
    open_dir = Path("/run") / f"sentinel-test-{uuid.uuid4().hex}"
    open_dir.mkdir(mode=0o700)
    try:
        open_dir.chmod(0o1777)
        script = (
            f"#!/bin/sh\nexec 2>&1\necho x > {open_dir}/planted && echo BROKE\n"
            "echo x > planted-here && echo workspace-written\nexit 1\n"
        )
        ran = " ".join((await script_tools(tmp_path, script).check_kotlin(KOTLIN)).notes)
        assert "workspace-written" in ran and "BROKE" not in ran, ran
        assert not (open_dir / "planted").exists()
    finally:
        shutil.rmtree(open_dir)


def test_the_tools_view_of_the_files_is_said(tmp_path) -> None:
    said = script_tools(tmp_path, "#!/bin/sh\nexit 1\n").describe()
    assert any("a /tmp, /var/tmp and /dev/shm of its own" in n and "no other file" in n for n in said), said


async def test_a_tool_sees_none_of_the_machines_files_outside_its_system_directories(tmp_path) -> None:
    """Red team 'swarm' 7: its view was the machine's whole root, read-only: a file left world-readable
    outside /tmp (a home, a data dir) it read. Now only the system directories are in it; its own program
    (a JDK's: its home) and workspace still run."""
    home = Path("/home") / f"sentinel-test-{uuid.uuid4().hex}"
    home.mkdir(mode=0o755)
    try:
        (home / "left").write_text("readable")
        (home / "left").chmod(0o644)
        script = (
            f"#!/bin/sh\nexec 2>&1\ncat {home}/left && echo BROKE\nls / | tr '\\n' ' '\n"
            "echo x > planted-here && echo workspace-written\nexit 1\n"
        )
        ran = " ".join((await script_tools(tmp_path, script).check_kotlin(KOTLIN)).notes)
        assert "workspace-written" in ran and "BROKE" not in ran, ran
        assert " home " not in ran and " root " not in ran and " usr " in ran, ran
    finally:
        shutil.rmtree(home)


async def test_what_a_tool_writes_in_its_workspace_is_bounded(tmp_path) -> None:
    """Red team 'swarm' 7: its workspace was the machine's directory: file after file (each under its file
    cap) it filled the machine's disk, the gateway's store and audit with it. Now its workspace is a copy of
    its own in memory charged to its cgroup: past its memory cap it is stopped, and the machine's disk has
    nothing of it."""
    script = (
        f"#!{TOOL_PYTHON}\nimport os, sys\nn = 0\ntry:\n    for n in range(160):\n"
        "        with open(f'f{n}', 'wb') as f:\n            f.write(b'x' * 1024 * 1024)\n    n = 160\n"
        "except OSError as e:\n    print(type(e).__name__)\n"
        "print('wrote', n, 'sources', open('app/src/main/java/com/example/A.kt').read().count('class A'))\n"
        "sys.exit(1)\n"
    )
    ran = " ".join((await script_tools(tmp_path, script, max_memory_mb=64).check_kotlin(KOTLIN)).notes)
    assert "wrote 160" not in ran, ran


async def test_a_tools_workspace_holds_what_the_gateway_wrote(tmp_path) -> None:
    """Its workspace, a copy of its own, still holds the sources it checks, its to write (its uid's)."""
    script = (
        f"#!{TOOL_PYTHON}\nimport os, sys\nst = os.stat('app/src/main/java/com/example/A.kt')\n"
        "print('sources', open('app/src/main/java/com/example/A.kt').read().count('class A'),"
        " st.st_uid == os.getuid(), os.access('.', os.W_OK))\nsys.exit(1)\n"
    )
    ran = " ".join((await script_tools(tmp_path, script).check_kotlin(KOTLIN)).notes)
    assert "sources 1 True True" in ran, ran


@pytest.mark.parametrize(
    "device", ["ptmx", "fuse", "kmsg", "loop-control", "net/tun", "console", "kvm", "mqueue", "pts/ptmx"]
)
async def test_a_tool_sees_none_of_the_machines_devices_but_the_plain_ones(tmp_path, device) -> None:
    """Red team 'swarm' 7: its /dev was the machine's: a terminal of the machine's (``/dev/ptmx``: a pty of
    the machine's count, its logins'), FUSE, the kernel log, loop devices, the POSIX queues of the machine's
    IPC namespace, whatever its modes let it open. Now its /dev holds null, zero, full, random, urandom and
    tty only (and its own shm), each still working."""
    if not os.path.exists(f"/dev/{device}"):
        pytest.skip(f"no /dev/{device} on this machine")
    script = (
        f"#!{TOOL_PYTHON}\nimport os, sys\n"
        "with open('/dev/urandom', 'rb') as r, open('/dev/null', 'wb') as w:\n"
        "    w.write(r.read(16))\n    print('plain ones work')\n"
        f"print('BROKE' if os.path.exists('/dev/{device}') else 'refused:')\nsys.exit(1)\n"
    )
    ran = " ".join((await script_tools(tmp_path, script).check_kotlin(KOTLIN)).notes)
    assert "plain ones work" in ran and "refused:" in ran and "BROKE" not in ran, ran


async def test_a_tool_sees_no_cgroup_or_device_of_the_machines_in_sys(tmp_path) -> None:
    """Red team 'swarm' 7: /sys was in its view: every cgroup's use (another build's memory and processes, the
    gateway's), the machine's devices. A JVM or aapt needs none of it: /sys is not in its view."""
    script = f"#!{TOOL_PYTHON}\nimport os, sys\nprint('BROKE' if os.path.exists('/sys/fs') else 'refused:')\n"
    ran = " ".join((await script_tools(tmp_path, script + "sys.exit(1)\n").check_kotlin(KOTLIN)).notes)
    assert "refused:" in ran and "BROKE" not in ran, ran


def test_a_jdks_program_is_given_its_home(tmp_path) -> None:
    """A JDK's ``bin/java`` needs its ``lib`` beside it: its home is kept, not its ``bin`` alone; a ``bin``
    that is no JDK's (a user's ``~/bin``) is kept alone, its home not brought into the view."""
    (tmp_path / "jdk" / "bin").mkdir(parents=True)
    (tmp_path / "jdk" / "release").write_text('JAVA_VERSION="17"\n')
    (tmp_path / "home" / "bin").mkdir(parents=True)
    programs = [str(tmp_path / p) for p in ("jdk/bin/java", "home/bin/java", "sdk/aapt2")]
    assert kept_dirs(programs) == [str(tmp_path / p) for p in ("jdk", "home/bin", "sdk")]


async def test_what_a_killed_run_left_is_removed_before_its_uid_is_leased_again(tmp_path) -> None:
    """A gateway killed (-9) leaves its run's workspace, its uid's; a machine without the mount namespace
    keeps what the tool wrote in /tmp. Here both are made as a killed run leaves them, with the range's one
    uid: the next run of that uid finds neither, and what another uid owns is left alone."""
    uid = _ONE_UID["tool_uid_first"]
    name = f"sentinel-left-{uuid.uuid4().hex}"
    workspace, planted = Path(f"/tmp/swarm-ktlint-{name}"), Path(f"/dev/shm/{name}")
    others = Path(f"/tmp/{name}")
    workspace.mkdir(mode=0o700)
    (workspace / "A.kt").write_text("the other build's sources\n")
    planted.write_text("left for the next run\n")
    others.write_text("not the uid's\n")
    for p in (workspace, workspace / "A.kt", planted):
        os.lchown(p, uid, uid)
    os.lchown(others, uid + 1, uid + 1)
    try:
        ran = await _ran(tmp_path, "#!/bin/sh\nid -u\nexit 1\n", "t")
        assert ran.split()[-1] == str(uid), ran
        assert not workspace.exists() and not planted.exists()
        assert others.read_text() == "not the uid's\n"
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
        for p in (planted, others):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()


async def test_a_shared_memory_segment_a_tool_left_is_not_there_for_the_next_run(tmp_path) -> None:
    """A System V segment outlives its process: left by one run, the next run of its uid attached it. Each
    tool now has an IPC namespace of its own."""
    key = int(uuid.uuid4().hex[:7], 16)
    ipc = (
        f"#!{TOOL_PYTHON}\nimport ctypes, sys\nlibc = ctypes.CDLL(None)\n"
        "print('found' if libc.shmget({key}, 0, 0) >= 0 else 'absent', "
        "'made' if libc.shmget({key}, 4096, 0o1600) >= 0 else 'not made')\nsys.exit(1)\n"
    )
    try:
        wrote = await _ran(tmp_path, ipc.format(key=key), "w")
        read = await _ran(tmp_path, ipc.format(key=key), "r")
    finally:  # left in the machine's own namespace by a run without one (main)
        subprocess.run(["ipcrm", "-M", str(key)], capture_output=True)
    assert "absent made" in wrote, wrote
    assert "absent" in read and "found" not in read, read
