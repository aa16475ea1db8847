"""A tiny supervisor each stdio upstream runs under, so nothing outlives the gateway, however it stops.

Run as ``python -I -S upstream_reaper.py GATEWAY_PID COMMAND ARGS...`` (standard library only, fast start).
It asks the kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), starts the command as its child
in the same process group (the SDK gives each upstream its own), hands it stdin/stdout, and when it gets
that signal (the gateway was killed, even with ``kill -9``) it kills the whole group: the upstream and
every grandchild it started. Otherwise it waits for the command and exits as it did.

A grandchild can leave the group (``setsid``) and keep the upstream's pipes open after the upstream died:
the gateway would never see the wire end, and it would outlive everything. So the reaper is the child
subreaper of what it starts (``PR_SET_CHILD_SUBREAPER``: an orphan below it is re-parented to it, not to
init) and, when the command ends or the reaper is told to stop, ends every process below it, found by
their parents in ``/proc``, whatever group or session they moved to.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_SECONDS = 0.5  # SIGTERM to SIGKILL; below the gateway's own grace for the group (process_groups.py)


def _below() -> list[int]:
    """The live processes below this one (its children, theirs...), from ``/proc``; none without it."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] != "Z" and len(fields) > 1 and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(entry))
    out: list[int] = []
    stack = [os.getpid()]
    while stack:
        for c in children.get(stack.pop(), ()):
            out.append(c)
            stack.append(c)
    return out


def _reap() -> None:
    """Collect every child that has ended (orphans re-parented here included)."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def _end_below() -> None:
    """SIGTERM every process below this one, SIGKILL what is left after ``GRACE_SECONDS``; again while
    one is found (one may fork as it is killed)."""
    for sig in (signal.SIGTERM, *[signal.SIGKILL] * 5):
        left = _below()
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + (GRACE_SECONDS if sig == signal.SIGTERM else 0.5)
        while time.monotonic() < deadline and _below():
            _reap()
            time.sleep(0.02)
        _reap()


def _kill_group() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        os.killpg(0, signal.SIGTERM)
        _end_below()  # the group's and those that left it
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(143)


def main(argv: list[str]) -> int:
    gateway, command = int(argv[1]), argv[2:]
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    except (OSError, AttributeError):
        pass  # not Linux: the process group is still reaped on an orderly stop
    if os.getppid() != gateway:  # the gateway died before we could ask: nobody is left to serve
        return 1
    child = os.fork()
    if child == 0:
        try:
            os.execvp(command[0], command)
        except OSError as e:
            print(f"cannot start {command[0]}: {e.strerror}", file=sys.stderr)
            os._exit(127)
    # only the command holds the wire now: its EOF is the gateway's EOF
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: _kill_group())
    while True:
        try:
            pid, status = os.waitpid(-1, 0)  # orphans re-parented here are collected too
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        if pid == child:
            # the upstream is over: what it left behind would hold its pipes (and outlive the gateway)
            _end_below()
            return os.waitstatus_to_exitcode(status) & 0xFF


if __name__ == "__main__":
    sys.exit(main(sys.argv))
