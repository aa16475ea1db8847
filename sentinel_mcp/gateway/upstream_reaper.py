"""A tiny supervisor each stdio upstream runs under, so nothing outlives the gateway, however it stops.

Run as ``python -I -S upstream_reaper.py GATEWAY_PID COMMAND ARGS...`` (standard library only, fast start).
It asks the kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), starts the command as its child
in the same process group (the SDK gives each upstream its own), hands it stdin/stdout, and when it gets
that signal (the gateway was killed, even with ``kill -9``) it kills the whole group: the upstream and
every grandchild it started. Otherwise it waits for the command and exits as it did.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1


def _kill_group() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        os.killpg(0, signal.SIGTERM)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    time.sleep(0.02)
            except ChildProcessError:
                break
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(143)


def main(argv: list[str]) -> int:
    gateway, command = int(argv[1]), argv[2:]
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
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
            _, status = os.waitpid(child, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        return os.waitstatus_to_exitcode(status) & 0xFF


if __name__ == "__main__":
    sys.exit(main(sys.argv))
