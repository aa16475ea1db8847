"""Helpers for tests of the processes a verification tool starts: a stand-in ``java`` (a script the test
writes: the tool's first process), and looks at /proc for what is left running."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from sentinel_mcp.swarm.toolchain import Toolchain, VerifySettings

# the Python a stand-in tool's own scripts run with: the tool runs as ``nobody`` under a root gateway, and the
# tests' interpreter may live under an owner-only directory (/root/.pyenv) it cannot reach
TOOL_PYTHON = shutil.which("python3", path=os.defpath) or sys.executable

KOTLIN = {"app/src/main/java/com/example/A.kt": "package com.example\n\nclass A\n"}


def script_tools(
    tmp_path: Path, script: str, tool_user: str | None = None, name: str = "java", **caps: int
) -> Toolchain:
    """A toolchain whose ``java`` is ``script`` (a file the test writes, ``name`` in ``tmp_path``: tools
    that share a directory see it, and only it, under their private /tmp; its ktlint jar is never read)."""
    java = tmp_path / name
    java.write_text(script)
    java.chmod(0o755)
    jar = tmp_path / "ktlint"
    jar.write_text("not a jar: never read\n")
    settings = VerifySettings(
        kotlin=True,
        resources=False,
        java=str(java),
        ktlint=str(jar),
        timeout=900,
        **caps,
        **({"tool_user": tool_user} if tool_user else {}),
    )
    return Toolchain(settings)


# a process a stand-in tool recorded: its pid namespace (``pid:[N]``) and its pid there. A root gateway's tool
# has a pid namespace of its own (``tool_supervisor.py``): its number alone would name another process here
# (1: this machine's init), so each is found again through its namespace, never signalled by number alone.
Recorded = tuple[str, int]


def record_sh(pids: Path, pid: str = "$$") -> str:
    """The shell line a stand-in tool records a process of its with (``$$``, ``$!``)."""
    return f'echo "$(readlink /proc/self/ns/pid) {pid}" >> {pids}'


def record_py(pids: Path) -> str:
    """The Python statement a stand-in tool's process records itself with (``os`` imported)."""
    return f"open({str(pids)!r}, 'a').write(os.readlink('/proc/self/ns/pid') + ' %d\\n' % os.getpid())"


def recorded(pids: Path) -> list[Recorded]:
    if not pids.exists():
        return []
    lines = [line.split() for line in pids.read_text().splitlines()]
    return [(ns, int(pid)) for ns, pid in (p for p in lines if len(p) == 2)]


def pid_here(process: Recorded) -> int | None:
    """The pid in this test's namespace of a recorded process; None when none runs (its namespace gone)."""
    ns, pid = process
    if ns == os.readlink("/proc/self/ns/pid"):
        return pid
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{name}/ns/pid") != ns:
                continue
            for line in Path(f"/proc/{name}/status").read_text().splitlines():
                if line.startswith("NSpid:") and int(line.split()[-1]) == pid:
                    return int(name)
    return None


def alive(process: Recorded) -> bool:
    pid = pid_here(process)
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is no process left running
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


def all_gone(processes: list[Recorded], looks: int = 200) -> bool:
    """Whether every recorded process has ended, looked at up to ``looks`` times: a killed process closes its
    files (the pipes' end the swarm waits for) before the kernel marks it exited, so right after the swarm
    returns it may still read as running for a moment on a loaded machine."""
    for _ in range(looks):
        if not any(alive(p) for p in processes):
            return True
        time.sleep(0.02)
    return False


def kill_all(processes: list[Recorded]) -> None:
    for process in processes:
        pid = pid_here(process)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
