"""Stopping what a verification tool started: its process group, its cgroup, what is left of its session."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

from sentinel_mcp.swarm.tool_cgroup import ToolCgroup


def stop_session(sid: int) -> None:
    """Kill every process left in a tool's session (``start_new_session``: its id is the tool's first pid),
    found in /proc (Linux; elsewhere the group's kill alone holds). Each is held by a pidfd before it is
    judged, so a pid that ends and is reused meanwhile is never signalled; looked again (a bounded number of
    times) while something was found, as one may fork as it is killed. A process that left the session
    (``setsid``) is not found: only a cgroup holds those."""
    if not hasattr(os, "pidfd_open") or not os.path.isdir("/proc"):
        return
    for _ in range(_SESSION_SWEEPS):
        found = False
        with contextlib.suppress(OSError), os.scandir("/proc") as entries:
            for entry in entries:
                if entry.name.isdigit() and _kill_if_in_session(int(entry.name), sid):
                    found = True
        if not found:
            return


_SESSION_SWEEPS = 16


def _kill_if_in_session(pid: int, sid: int) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # gone, or not ours to see
        return False
    try:
        # read after the pidfd holds the process: a reused pid is another process, which the pidfd is not
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        if int(fields[3]) != sid or fields[0] == b"Z":
            return False
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return True
    except (OSError, IndexError, ValueError):
        return False
    finally:
        os.close(fd)




def stop_all(proc: asyncio.subprocess.Process, cgroup: ToolCgroup | None) -> None:
    """Kill every process of the tool's cgroup (those that left its session included), and tell its
    supervisor (Linux) to kill and reap all it has left, its subreaper's orphans included, and end: the
    tool's first process is then reaped by the supervisor before it ends (killed together, it was left a
    zombie for init to reap). Elsewhere the tool's group is killed."""
    if cgroup is not None:
        cgroup.kill()
    if not sys.platform.startswith("linux"):
        stop_group(proc.pid)
        return
    if proc.returncode is None:  # nothing is sent once it has been reaped (its pid may be another's)
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)


def stop_group(pgid: int) -> None:
    """Kill every process of a tool's group (the group's id is its first process's: start_new_session), while
    one of them still holds its output (a tool that ended and closed it is not looked for again: once its
    group is empty, the id may be another's)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
