"""Stdio upstreams launched before the gateway imports the MCP SDK, and adopted when the SDK spawns them.

The SDK's import is most of the gateway's cold start, and a stdio upstream spends its own start importing it
too: launching the upstream first lets the two starts run side by side on two cores (issue 21). ``launch``
spawns the process as the SDK's ``stdio_client`` would (the same command under the reaper, the same
environment, directory and stderr, its own process group: upstream_session.py); ``adopt``, called from the
SDK's spawn hook (``process_groups.py``), hands it over only on an exact match of what the SDK asks for, and
only once. Anything not adopted by the end of start-up is killed with its process group (``discard``): the SDK
then spawns as it always did, so a mismatch costs only the head start. Standard library and anyio only: this
module must not load the SDK.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

import anyio
from anyio.abc import Process

from sentinel_mcp.gateway.upstream_session import open_upstream
from sentinel_mcp.gateway.upstream_stderr import relayed_stderr

log = logging.getLogger(__name__)

REAPER = str(Path(__file__).with_name("upstream_reaper.py"))
# what the SDK's stdio_client passes on POSIX: get_default_environment() (these names, shell functions left
# out) merged with the server's own env (mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS). Should the SDK change
# it, the launch no longer matches and is discarded: slower, never different.
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
DISCARD_WAIT = 2.0  # seconds at most to reap a discarded launch after SIGKILL

_Key = tuple[str, tuple[str, ...], tuple[tuple[str, str], ...], str | None]
_launched: dict[_Key, tuple[Process, TextIO]] = {}


def reaped_command(command: str, args: list[str], env: dict[str, str] | None) -> tuple[str, list[str]]:
    """Every upstream runs under the reaper (killed with its grandchildren if the gateway dies, even kill -9);
    a command that cannot be found is left as it is, so that the spawn fails as the SDK's does."""
    found = shutil.which(command, path=(env or os.environ).get("PATH"))
    if sys.platform.startswith("linux") and found is not None:
        return sys.executable, ["-I", "-S", REAPER, str(os.getpid()), command, *args]
    return command, list(args)


def sdk_environment(extra: dict[str, str] | None) -> dict[str, str]:
    env = {}
    for name in INHERITED_ENV:
        value = os.environ.get(name)
        if value is not None and not value.startswith("()"):
            env[name] = value
    return env | (extra or {})


def _key(command: str, args: list[str], env: dict[str, str] | None, cwd: str | Path | None) -> _Key:
    return command, tuple(args), tuple(sorted((env or {}).items())), None if cwd is None else str(cwd)


async def launch(command: str, args: list[str], env: dict[str, str] | None, cwd: str | Path | None,
                 name: str | None = None) -> bool:
    """Spawn what the SDK would spawn for ``StdioServerParameters(command, args, env, cwd)``; False when it
    cannot be spawned (the SDK's own attempt then fails and is reported as before)."""
    full_env = sdk_environment(env)
    key = _key(command, args, full_env, cwd)
    if key in _launched:
        return True
    spawn_command, spawn_args = reaped_command(command, args, full_env)
    errlog = sys.stderr
    stderr = relayed_stderr(name or command)  # its stderr bounded, as a spawn of the SDK's is
    try:
        process = await open_upstream([spawn_command, *spawn_args], full_env, stderr, cwd)
    except (OSError, ValueError) as e:
        log.debug("early launch of %s failed (%s); the SDK will spawn it", command, e)
        return False
    finally:
        os.close(stderr)
    _launched[key] = (process, errlog)
    return True


def adopt(command: str, args: list[str], env: dict[str, str] | None, errlog: Any,
          cwd: str | Path | None) -> Process | None:
    """The launched process for exactly this spawn request (taken: a second request gets None), or None."""
    key = _key(command, args, env, cwd)
    entry = _launched.get(key)
    if entry is None or entry[1] is not errlog:
        return None
    del _launched[key]
    process = entry[0]
    if process.returncode is not None:  # it died meanwhile: the SDK spawns a fresh one
        log.debug("early launch of %s had ended (%s); spawning again", command, process.returncode)
        return None
    log.debug("upstream process %d adopted (launched before the SDK loaded)", process.pid)
    return process


def pending() -> int:
    return len(_launched)


def launched_pids() -> list[int]:
    """The launched processes not adopted yet (the reapers' pids; each leads its process group)."""
    return [process.pid for process, _ in _launched.values()]


async def discard() -> None:
    """Kill (with their process groups) and reap the launches no spawn request adopted."""
    entries = list(_launched.values())
    _launched.clear()
    for process, _ in entries:
        log.debug("upstream process %d discarded (launched early, not adopted)", process.pid)
        try:
            os.killpg(process.pid, signal.SIGKILL)  # its own group (upstream_session.py): led by it
        except (ProcessLookupError, PermissionError):
            pass
        with anyio.move_on_after(DISCARD_WAIT, shield=True):
            await process.aclose()
