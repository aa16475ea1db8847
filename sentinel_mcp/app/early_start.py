"""``serve`` started so that the stdio upstreams' own starts overlap the gateway's (issue 21), either front.

The config's stdio upstreams are launched first, before the gateway imports the MCP SDK, its engine and its
built-ins (about a second of CPU, most of it the SDK); an upstream (a Python MCP server) spends that second
importing the same SDK in its own process. The SDK adopts the launched processes when it connects
(``gateway/early_spawn.py``); what it does not adopt is killed once start-up is over. Nothing is served before
the gateway is assembled as before: the guard, the audit log and every upstream's first connection included.
Over HTTP the uvicorn server runs in the same event loop that launched the upstreams (adopted processes belong
to the loop that spawned them), as ``await server.serve()``; uvicorn handles SIGINT and SIGTERM as in its own
``run``.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from typing import TYPE_CHECKING, Any

import anyio

from sentinel_mcp.core.import_collector import imports_uncollected
from sentinel_mcp.gateway import early_spawn

if TYPE_CHECKING:
    from sentinel_mcp.config import Config

log = logging.getLogger(__name__)


async def launch_stdio_upstreams(config: Config) -> None:
    from sentinel_mcp.config import StdioServer

    for name, spec in config.mcp_servers.items():
        if isinstance(spec, StdioServer) and not spec.disabled:
            await early_spawn.launch(spec.command, spec.args, spec.env or None, spec.cwd, name)


async def rehearse_rulebases_early(config: Config) -> None:
    """The guard's rulebases rehearsed now (``policy/load_rehearsal.begin``): the child SWI-Prolog's load runs
    beside the gateway's imports on the other core, and the guard's start takes its verdict (for the same
    bytes only) instead of starting one then. Anything amiss is left to the load, which reports it as
    always."""
    files = config.rulebase_paths() if config.sentinel.rulebases else []
    if not files or not all(f.is_file() for f in files):
        return
    from sentinel_mcp.policy import load_rehearsal
    from sentinel_mcp.policy.rulebase_digest import set_digest

    try:
        await load_rehearsal.begin(files, set_digest(files))
    except Exception:  # noqa: BLE001 - a head start only: the load rehearses itself
        log.debug("early rulebase rehearsal not started", exc_info=True)


def start_engine_early(config: Config) -> None:
    """The process's Prolog engine started now when rulebases are configured (``EngineThread.begin``): its
    start overlaps the SDK's import instead of following the built-ins' set-up. Not waited for; a start
    error is the guard's start's, reported there as before."""
    if not config.sentinel.rulebases:
        return
    from sentinel_mcp.policy.engine import shared_engine

    try:
        shared_engine().begin()
    except Exception:  # noqa: BLE001 - a head start only: the guard's start starts it and reports
        log.debug("early engine start not begun", exc_info=True)


async def _discard_early() -> None:
    from sentinel_mcp.policy import load_rehearsal

    with contextlib.suppress(Exception):
        await load_rehearsal.discard_early()
    await early_spawn.discard()


async def serve_stdio_early(config: Config) -> None:
    log.debug("start-up stage: config read")
    try:
        await launch_stdio_upstreams(config)
        log.debug("start-up stage: upstreams launched")
        await rehearse_rulebases_early(config)
        start_engine_early(config)
        # imported now, while the upstreams start: the SDK, the engine, the built-ins' registry
        with imports_uncollected("sentinel_mcp.app.serve"):
            from sentinel_mcp.app.serve import serve_stdio
        log.debug("start-up stage: gateway imported")

        await serve_stdio(config)
    finally:
        await _discard_early()  # start-up failed before the SDK asked for them: nothing is left running


async def serve_http_early(config: Config, host: str, port: int, served: list[Any] | None = None) -> None:
    try:
        await launch_stdio_upstreams(config)
        await rehearse_rulebases_early(config)
        start_engine_early(config)
        with imports_uncollected("sentinel_mcp.app.serve"):
            from sentinel_mcp.app.serve import http_server

        server = http_server(config, host, port)  # a refusal to serve (TLS, auth) raises here, no socket yet
        if served is not None:
            served.append(server)
        await server.serve()
    finally:
        await _discard_early()


async def launch_default_upstreams() -> None:
    """The embedded default's stdio upstreams launched from its plain data, before the config models load
    (pydantic, every section's settings: ~0.2 s of CPU the upstream's own start now runs beside). Its parse
    asks for the same spawn, which adopts it; a launch nothing adopts is discarded, as any other."""
    from sentinel_mcp.config_default import default_stdio_upstreams

    for name, command, args in default_stdio_upstreams():
        await early_spawn.launch(command, args, None, None, name)
    log.debug("start-up stage: default upstreams launched")


async def serve_stdio_of(path: str | None) -> None:
    """``serve`` over stdio of the config file at ``path`` (None: the embedded default), read here: a config
    that cannot be read or validated is reported as before (its file, key and problem), and an upstream
    launched before it was read is killed."""
    try:
        if path is None:
            await launch_default_upstreams()
        with imports_uncollected("sentinel_mcp.config"):  # its models, and the parse: start-up objects
            from sentinel_mcp.config import load_config

            config = load_config(path)
    except BaseException:
        await _discard_early()
        raise
    await serve_stdio_early(config)


def run_stdio_of(path: str | None) -> None:
    try:
        anyio.run(serve_stdio_of, path)
    except KeyboardInterrupt:
        pass


def run_http(config: Config, host: str, port: int) -> None:
    served: list[Any] = []
    anyio.run(serve_http_early, config, host, port, served)
    # uvicorn raises a SIGINT it stopped for again once it has stopped; the event loop's own handler turns it
    # into a cancellation of the main task, lost when that task ends before its next await (exit 0, now and
    # then, instead of 130): say it here too
    if served and signal.SIGINT in getattr(served[0], "_captured_signals", ()):
        raise KeyboardInterrupt
