"""The command a gateway starts for a test upstream served by the fork server (``fork_server.py``).

Run as ``python -I -S fork_launcher.py SOCKET SCRIPT ARGS...`` or ``... SOCKET -m MODULE ARGS...``
(standard library only: ~20 ms to start, where the upstream's own imports cost ~1 s of CPU). It hands the
server its stdin, stdout and stderr (``SCM_RIGHTS``), environment, working directory, umask, process group
and resource limits; the server forks a child of its warm interpreter that runs the script as ``__main__``
with them. The launcher then stands in for that child: signals sent to it are relayed, its exit is the
child's (the code, or death by the same signal), and its death (even ``kill -9``) closes the connection the
child's watcher holds, which kills the child. With no server (not started, gone, refusing the request) it
becomes the ordinary command by ``exec``: slower, never different, never a hang.
"""

from __future__ import annotations

import array
import json
import os
import resource
import signal
import socket
import sys

RELAYED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def dispositions() -> dict[str, str]:
    """How this process was started to take each signal ("ign", "dfl", or Python's "int" for SIGINT), read
    before its relays are set: a direct start's script inherits the same (a job started in the background by
    a shell, as CI's, has SIGINT ignored)."""
    out = {}
    for signum in signal.valid_signals():
        if signum in (signal.SIGKILL, signal.SIGSTOP):
            continue
        handler = signal.getsignal(signum)
        if handler in (signal.SIG_IGN, signal.SIG_DFL, signal.default_int_handler):
            out[str(int(signum))] = ("ign" if handler == signal.SIG_IGN
                                     else "int" if handler is signal.default_int_handler else "dfl")
    return out


_started_with: dict[str, str] = {}


def request(target: list[str]) -> bytes:
    """What the child must be started with: everything a direct start would inherit from this process."""
    limits = {name: resource.getrlimit(getattr(resource, name))
              for name in dir(resource) if name.startswith("RLIMIT_")}
    umask = os.umask(0o22)
    os.umask(umask)
    return json.dumps({"argv": target, "env": dict(os.environ), "cwd": os.getcwd(), "limits": limits,
                       "umask": umask, "pgid": os.getpgrp(),
                       "signals": _started_with}).encode()


def _line(conn: socket.socket) -> bytes:
    """One reply line; whatever came before the connection ended if it ended first."""
    got = b""
    while not got.endswith(b"\n"):
        part = conn.recv(64)
        if not part:
            break
        got += part
    return got


def _direct(target: list[str]) -> None:
    """The command as it would have been started without the server (its interpreter without -I -S)."""
    os.execv(sys.executable, [sys.executable, *target])


def _asked(sock_path: str, target: list[str]) -> tuple[socket.socket, int] | None:
    """The connection and the child's pid once the server started it; None: it did not (nothing was
    started, this process's stdio is still its own)."""
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(sock_path)
        body = request(target)
        data = len(body).to_bytes(4, "big") + body
        fds = array.array("i", [0, 1, 2])
        sent = conn.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        conn.sendall(data[sent:])
        reply = _line(conn)
    except (OSError, ValueError):
        return None
    if not reply.startswith(b"ok "):
        conn.close()
        return None
    return conn, int(reply.split()[1])


_child: list[int] = []  # the child's pid, once the server started it
_pending: list[int] = []  # signals that came before: relayed once it is known


def _relay(signum: int, _frame: object = None) -> None:
    if not _child:
        _pending.append(signum)
        return
    try:
        os.kill(_child[0], signum)
    except ProcessLookupError:
        pass


def main(argv: list[str]) -> None:
    sock_path, target = argv[1], argv[2:]
    _started_with.update(dispositions())
    for signum in RELAYED:  # from the start: a signal sent as soon as the child speaks must reach it
        signal.signal(signum, _relay)
    asked = _asked(sock_path, target)
    if asked is None:
        for signum in RELAYED:
            signal.signal(signum, signal.SIG_DFL)
        for signum in _pending:  # it was meant for the script, which is not started yet: as it would have
            os.kill(os.getpid(), signum)
        _direct(target)
        return
    conn, pid = asked
    _child.append(pid)
    for signum in _pending:
        _relay(signum)
    # the child's stdin and stdout are its alone: their EOF is the child's, not this process's
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    how, _, value = _line(conn).decode().partition(" ")
    if how == "exit":
        os._exit(int(value))
    signum = int(value) if how == "signal" else signal.SIGKILL  # no word: the child was killed with it
    signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signum])
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


if __name__ == "__main__":
    main(sys.argv)
