"""Where a stdio upstream is started: a process group of its own always, a session of its own only when the
gateway has a controlling terminal.

The group is what the SDK and the gateway kill an upstream by (its leader's pid, the reaper's, is the group's
id either way). A session of its own keeps an upstream from the gateway's terminal (``/dev/tty``, keystrokes
pushed with ``TIOCSTI``, terminal signals); when the gateway has no terminal there is none to keep it from,
and the session costs the upstream: Linux schedules every session as a group of its own
(``sched_autogroup``), and an upstream alone in its group waited ~2-3 ms on a run queue a call and took
~1.7x the CPU a call of the same process in the gateway's session (issue 21,
``benchmarks/harness/upstream_call_counts.py cpu``). Standard library and anyio only (early_spawn.py loads
this before the SDK).
"""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
from anyio._core._eventloop import get_async_backend
from anyio.abc import Process


def options_after(error: OSError | None) -> dict[str, Any]:
    """The spawn's options once ``/dev/tty`` was opened (``error`` None) or failed with ``error``: only "no
    controlling terminal" (``ENXIO``) leaves the upstream in the gateway's session; any other doubt gives it
    a session of its own, the safe side."""
    if error is not None and error.errno == errno.ENXIO:
        return {"process_group": 0}
    return {"start_new_session": True}


def spawn_options() -> dict[str, Any]:
    """``subprocess.Popen``'s options for an upstream's process, from the gateway's terminal as it is now."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError as e:
        return options_after(e)
    os.close(fd)
    return options_after(None)


async def open_upstream(command: list[str], env: dict[str, str] | None, stderr: int,
                        cwd: str | Path | None) -> Process:
    """The upstream's process with its stdin and stdout piped, as the SDK's ``stdio_client`` spawns it except
    for the session (``spawn_options``). anyio's ``open_process`` knows no ``process_group``: its backend's
    hands every option on to ``subprocess`` (a backend that does not: a session of its own, as before)."""
    options = spawn_options()
    if "start_new_session" not in options:
        try:
            return await get_async_backend().open_process(  # type: ignore[no-any-return]
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=cwd, env=env,
                **options)
        except TypeError:  # the backend's signature, not the spawn: nothing was started
            pass
    return await anyio.open_process(command, stderr=stderr, cwd=cwd, env=env, start_new_session=True)
