"""A warm interpreter that starts test upstreams by ``fork`` instead of a fresh Python each.

A test upstream's start is ~1 s of CPU, nearly all of it imports (``mcp`` alone ~0.8 s), and the suite
starts thousands. Run as ``python fork_server.py SOCKET`` (by ``forked_upstreams.py``, one a pytest
worker), it imports the SDK once, then for each launcher (``fork_launcher.py``) that connects forks a
*keeper* which forks the *child*: the child takes the launcher's stdio, environment, working directory,
umask, limits and (where the session allows) process group, and runs the script as ``__main__``. The keeper
writes ``ok PID``, then waits for either end: the child's (its status is written to the launcher) or the
launcher's (the connection closes: the child and all below it are killed). The server exits when its stdin
closes (the pytest worker that started it is gone); keepers die with it (``PR_SET_PDEATHSIG``), children
with their keeper.

Only what cannot differ is shared: the server runs with no ``PYTHON*`` variable, and a request with one
(``PYTHONPATH`` aside: put on ``sys.path`` as a fresh start would) is refused (the launcher then execs
the script itself), as they decide the interpreter's own start.
"""

from __future__ import annotations

import array
import ctypes
import gc
import json
import os
import resource
import select
import signal
import socket
import sys

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
# what test upstreams import (third-party only: the tests' and the product's own modules may read the
# environment as they load, which differs per request)
PRELOAD = ("anyio", "pydantic", "mcp", "mcp.types", "mcp.server", "mcp.server.mcpserver", "mcp.server.stdio",
           "mcp.server.lowlevel", "mcp.shared.exceptions", "httpx", "starlette.applications", "uvicorn")
KEEPER_NAME = "fk:"  # and the launcher's pid (15 bytes at most): the orphan check reads /proc/PID/comm

_libc = ctypes.CDLL(None, use_errno=True)
with open("/proc/self/comm", "rb") as _f:
    COMM = _f.read().strip()  # the interpreter's name, as a directly started script's process shows it


def _interpreter_env(env: dict[str, str]) -> dict[str, str]:
    """What decides the interpreter's own start, but for ``PYTHONPATH`` (``run`` puts it on ``sys.path``)."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON") and k != "PYTHONPATH"}


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    fds = array.array("i")
    data, ancdata, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        more = conn.recv(65536)
        if not more:
            raise ValueError("request cut short")
        data += more
    return json.loads(data[4:4 + int.from_bytes(data[:4], "big")]), list(fds)


def _below(pid: int) -> list[int]:
    """The live processes below ``pid`` (children found by ``/proc/PID/task/*/children``)."""
    out: list[int] = []
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = [int(c) for c in f.read().split()]
            except OSError:
                continue
            out.extend(kids)
            stack.extend(kids)
    return out


def _end_below() -> None:
    """Kill whatever the child left below the keeper (a subreaper: orphans come here), as the gateway's
    reaper does for a directly started upstream."""
    for _ in range(5):
        left = _below(os.getpid())
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                if os.waitpid(-1, 0)[0] == 0:
                    break
            except ChildProcessError:
                break


def _status_line(status: int) -> bytes:
    if os.WIFSIGNALED(status):
        return b"signal %d\n" % os.WTERMSIG(status)
    return b"exit %d\n" % os.waitstatus_to_exitcode(status)


def _keep(conn: socket.socket, req: dict, fds: list[int], listener: socket.socket) -> dict | None:
    """In the keeper: start the child and watch both ends. Returns the request in the child (which then
    runs it), never in the keeper (which exits here)."""
    listener.close()
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    launcher = int(req["launcher"])
    _libc.prctl(PR_SET_NAME, (KEEPER_NAME + str(launcher)).encode()[:15])
    if os.getppid() == 1:  # the server died before the death signal was asked for
        os._exit(1)
    try:  # here, where a failure still leaves the launcher to start the script itself
        _limits(req["limits"])
        os.umask(int(req["umask"]))
        os.chdir(req["cwd"])
    except (OSError, ValueError):
        os._exit(1)
    pid = os.fork()
    if pid == 0:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        conn.close()
        for i, fd in enumerate(fds):
            os.dup2(fd, i)
        return req
    for fd in fds:
        os.close(fd)
    try:
        child = os.pidfd_open(pid)
        conn.sendall(b"ok %d\n" % pid)
    except OSError:  # no "ok" read: the launcher starts the script itself
        os.kill(pid, signal.SIGKILL)
        os._exit(1)
    poll = select.poll()
    poll.register(conn.fileno(), select.POLLIN)
    poll.register(child, select.POLLIN)
    while True:
        ready = {fd for fd, _ev in poll.poll()}
        if child in ready:
            _pid, status = os.waitpid(pid, 0)
            _end_below()
            try:
                conn.sendall(_status_line(status))
            except OSError:
                pass
            os._exit(0)
        if conn.fileno() in ready and not conn.recv(1):  # the launcher is gone: so is what it stood for
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            _end_below()
            os._exit(0)


def serve(path: str) -> dict | None:
    """Serve until stdin closes; returns in a child only, with its request (the keeper never returns)."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    poll = select.poll()
    poll.register(listener.fileno(), select.POLLIN)
    poll.register(0, select.POLLIN)
    mine = _interpreter_env(dict(os.environ))
    while True:
        ready = {fd for fd, _ev in poll.poll()}
        if 0 in ready and not os.read(0, 1):
            os._exit(0)
        if listener.fileno() not in ready:
            continue
        conn, _ = listener.accept()
        fds: list[int] = []
        try:
            conn.settimeout(10)  # a launcher writes its request at once; a stuck one must not hold the rest
            req, fds = _read_request(conn)
            conn.settimeout(None)
            creds = array.array("i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
            req["launcher"] = creds[0]
            if len(fds) != 3 or _interpreter_env(req["env"]) != mine:
                raise ValueError("not servable here")
            if os.fork() == 0:
                return _keep(conn, req, fds, listener)
        except (OSError, ValueError):
            pass  # the launcher reads no "ok" and starts the script itself
        for fd in fds:
            os.close(fd)
        conn.close()


def _limits(limits: dict) -> None:
    for name, (soft, hard) in limits.items():
        which = getattr(resource, name, None)
        if which is not None and resource.getrlimit(which) != (soft, hard):
            resource.setrlimit(which, (soft, hard))


def run(req: dict) -> None:
    """In the child: become the script's process as a direct start would have made it, then run it."""
    gc.enable()  # its state is the script's: a fresh interpreter starts with the collector on
    for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
                   signal.SIGUSR2):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for key, how in req.get("signals", {}).items():  # as the launcher was started to take them
        try:
            signal.signal(int(key), signal.SIG_IGN if how == "ign" else
                          signal.default_int_handler if how == "int" else signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    for fd in os.listdir("/proc/self/fd"):
        if int(fd) > 2:
            try:
                os.close(int(fd))
            except OSError:
                pass
    try:
        os.setpgid(0, int(req["pgid"]))  # the launcher's group: the gateway's killpg reaches it too
    except OSError:
        pass  # another session (a gateway with a terminal): the launcher's relay and death still hold
    os.environ.clear()
    os.environ.update(req["env"])
    _libc.prctl(PR_SET_NAME, COMM)
    import runpy

    argv = req["argv"]
    extra = [p for p in req["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        sys.path[:1] = [os.getcwd(), *extra]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path[:1] = [os.path.dirname(os.path.abspath(argv[0])), *extra]
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    gc.disable()
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    gc.freeze()  # the imports' objects stay shared with every child (no collector writes to their pages)
    gc.enable()
    job = serve(sys.argv[1])
    if job is not None:
        run(job)
