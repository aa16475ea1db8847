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


def recorded(pids: Path) -> list[int]:
    return [int(p) for p in pids.read_text().split()] if pids.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is no process left running
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return False


def all_gone(pids: list[int], looks: int = 200) -> bool:
    """Whether every pid has ended, looked at up to ``looks`` times: a killed process closes its files (the
    pipes' end the swarm waits for) before the kernel marks it exited, so right after the swarm returns it
    may still read as running for a moment on a loaded machine."""
    for _ in range(looks):
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
