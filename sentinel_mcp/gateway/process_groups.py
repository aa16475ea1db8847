"""Reap every process an stdio upstream started, grandchildren included.

The SDK starts each stdio server in its own session (process group; the gateway keeps the group and gives a
session of its own only when it has a terminal: upstream_session.py) but only kills the group when the
server does not exit by itself; a server that exits cleanly can leave background children behind. We record
the group of each process spawned for an upstream and kill what is left of it after the connection closes.
Each server runs under ``upstream_reaper.py``, which kills its group when the gateway dies without
cleaning up (``kill -9``).
"""

from __future__ import annotations

import contextvars
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import anyio

import mcp.client.stdio as sdk_stdio

from sentinel_mcp.gateway import early_spawn
from sentinel_mcp.gateway.upstream_session import open_upstream
from sentinel_mcp.gateway.upstream_stderr import relayed_stderr

log = logging.getLogger(__name__)

_current_groups: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "sentinel_groups", default=None
)
_current_launched: contextvars.ContextVar[anyio.Event | None] = contextvars.ContextVar(
    "sentinel_launched", default=None
)
# the processes spawned from this task, handed to the SDK with their pipes shared with the lean calls
_current_taps: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "sentinel_taps", default=None
)
# the processes spawned from this task, their stdout measured (``stdout_meter.py``)
_current_meters: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "sentinel_meters", default=None
)
# the most bytes a line of their stdout may be (``tap_pipes``)
_current_max_line: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "sentinel_tap_max_line", default=None
)
# the upstream spawned from this task, naming its stderr's lines
_current_name: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "sentinel_spawn_name", default=None
)
# the principal whose own process it is (a ``per_principal`` upstream's), whose values mask its lines alone
_current_principal: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "sentinel_spawn_principal", default=None
)
_original_spawn = sdk_stdio._create_platform_compatible_process


REAPER = early_spawn.REAPER


async def _tracked_spawn(
    command: str,
    args: list[str],
    env: dict[str, str] | None = None,
    errlog: TextIO = sys.stderr,
    cwd: Path | str | None = None,
) -> Any:
    try:
        # launched before the SDK was imported (the stdio ``serve``, early_spawn.py): the very same process
        process: Any = early_spawn.adopt(command, args, env, errlog, cwd)
        if process is None:
            # every upstream runs under the reaper: killed with its grandchildren if the gateway dies
            name = _current_name.get() or command
            command, args = early_spawn.reaped_command(command, args, env)
            # bounded, escapes made visible, named, masked with the values sent to it (upstream_stderr.py)
            stderr = relayed_stderr(name, _current_principal.get())
            try:
                if sys.platform == "win32":
                    process = await _original_spawn(command, args, env, stderr, cwd)  # type: ignore[arg-type]
                else:  # the SDK's spawn but for the session (upstream_session.py)
                    process = await open_upstream([command, *args], env, stderr, cwd)
            finally:
                os.close(stderr)
    finally:
        launched = _current_launched.get()
        if launched is not None:  # spawned or failed to: the host's start-up may go on (app/runtime.py)
            launched.set()
    groups = _current_groups.get()
    if groups is not None:
        groups.append(process.pid)  # its own group (upstream_session.py): led by it
    meters = _current_meters.get()
    if meters is not None and getattr(process, "stdout", None) is not None:  # before a tap takes any of it
        from sentinel_mcp.gateway.stdout_meter import StdoutMeter

        meters.append(StdoutMeter(process.stdout))
    taps = _current_taps.get()
    if taps is not None:
        from sentinel_mcp.gateway.lean_stdio import TappedProcess

        process = TappedProcess(process, _current_max_line.get())
        taps.append(process)
    return process


sdk_stdio._create_platform_compatible_process = _tracked_spawn


def tap_pipes(max_line: int | None = None) -> list[Any]:
    """Hand the processes spawned from this task (and the tasks it starts) to the SDK as
    ``lean_stdio.TappedProcess``es, recorded in the list returned; ``max_line``: the most bytes a line of
    their stdout may be (the server's ``max_result_bytes``; None: ``lean_stdio.MAX_LINE_BYTES``)."""
    taps: list[Any] = []
    _current_taps.set(taps)
    _current_max_line.set(max_line)
    return taps


def meter_pipes() -> list[Any]:
    """Measure the stdout of the processes spawned from this task (and the tasks it starts): their
    ``stdout_meter.StdoutMeter``s, in the list returned."""
    meters: list[Any] = []
    _current_meters.set(meters)
    return meters


def track_groups(launched: anyio.Event | None = None, name: str | None = None,
                 principal: str | None = None) -> list[int]:
    """Start recording the process groups spawned from this task (and the tasks it starts); ``launched`` is
    set once a spawn was attempted (the process exists, or could not be started); ``name``: the upstream's,
    for its stderr's lines; ``principal``: whose own process it is (None: shared by every caller)."""
    _current_name.set(name)
    _current_principal.set(principal)
    groups: list[int] = []
    _current_groups.set(groups)
    _current_launched.set(launched)
    return groups


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


async def kill_groups(groups: list[int], grace: float = 1.0) -> None:
    """SIGTERM what is left of each group, then SIGKILL after ``grace`` seconds."""
    live = [g for g in groups if _group_alive(g)]
    for g in live:
        try:
            os.killpg(g, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while live and time.monotonic() < deadline:
        live = [g for g in live if _group_alive(g)]
        if live:
            await anyio.sleep(0.02)
    for g in live:
        try:
            os.killpg(g, signal.SIGKILL)
            log.info("killed leftover process group %d", g)
        except ProcessLookupError:
            pass
    groups.clear()
