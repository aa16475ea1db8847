"""Test upstreams started through this pytest worker's fork server (``fork_server.py``), on request.

``forked(command)`` turns ``[sys.executable, SCRIPT, ARGS...]`` (or ``[sys.executable, "-m", MODULE, ...]``)
into the launcher's command (``fork_launcher.py``), which the gateway starts as it would the script: the
script then runs in a fork of a warm interpreter (its imports done once a worker), ~1 s of CPU less a start.
Opt-in per test file: not for tests about an upstream's process itself (its start, kill, group, limits,
environment, stderr), which must see a fresh interpreter. ``SENTINEL_TEST_FORK=0`` leaves every command as
it is (the A/B switch). The server starts on the first use in a worker and exits with it (its stdin is a
pipe from the worker).

``orphans()``: the children left whose launcher is gone (none may outlive its test: checked after each
test of this worker, once its server runs, by ``tests/conftest.py``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support import fork_server

HERE = Path(__file__).parent
LAUNCHER = str(HERE / "fork_launcher.py")
SERVER = str(HERE / "fork_server.py")
_server: subprocess.Popen | None = None
_socket: str | None = None


def _started() -> str:
    """The socket of this process's server, started on first use."""
    global _server, _socket
    if _socket is None:
        _socket = os.path.join(tempfile.mkdtemp(prefix="sfork-"), "s")  # short: a socket path's 107 bytes
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        _server = subprocess.Popen([sys.executable, SERVER, _socket], stdin=subprocess.PIPE, env=env,
                                   stdout=subprocess.DEVNULL, cwd="/")
        atexit.register(stop)  # an xdist worker may end without it: the conftest's unconfigure calls it too
    return _socket


def stop() -> None:
    """End this process's server (its stdin closed: its cue; the keepers die with it) and remove its
    socket's directory."""
    global _server, _socket
    if _server is not None and _socket is not None:
        _server.stdin.close()  # type: ignore[union-attr]
        _server.wait()
        shutil.rmtree(os.path.dirname(_socket), ignore_errors=True)
    _server = _socket = None


def forked(command: list[str]) -> list[str]:
    """The launcher's command for ``command`` (a Python script or module run by this interpreter); any
    other command, or with the switch off, ``command`` itself."""
    if os.environ.get("SENTINEL_TEST_FORK") == "0" or not command or command[0] != sys.executable:
        return list(command)
    return [sys.executable, "-I", "-S", LAUNCHER, _started(), *command[1:]]


def forked_spec(*args: str) -> dict[str, Any]:
    """A config's ``command`` and ``args`` for ``python ARGS...`` through the fork server."""
    command = forked([sys.executable, *args])
    return {"command": command[0], "args": command[1:]}


def server_pid() -> int | None:
    return _server.pid if _server is not None else None


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def orphans(server: int | None = None) -> list[int]:
    """The keepers (each with its child) of ``server`` (this worker's by default) whose launcher is dead."""
    server = server if server is not None else server_pid()
    if server is None:
        return []
    left = []
    for keeper in _children(server):
        try:
            with open(f"/proc/{keeper}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if name.startswith(fork_server.KEEPER_NAME) and _alive(keeper) \
                and not _alive(int(name[len(fork_server.KEEPER_NAME):])):
            left.append(keeper)
    return left
