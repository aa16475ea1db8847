"""``serve_dual_era_loop`` for the stdio front, with a handshake-era connection's dispatcher shown to the lean
calls (``stdio_lean_calls``), so a call they serve asks the client (elicitation), notifies and is cancelled
through the same dispatcher the SDK's own calls use.

Everything else is the SDK's, in its order (mcp 2.3.0 ``mcp/server/runner.py``): the client's first request
decides the era (its replay helper); a modern connection is the SDK's ``_serve_modern_stream``; the
handshake loop below is ``_serve_legacy_stream`` line for line, plus the one ``adopt`` call.
"""

from __future__ import annotations

from typing import Any, Mapping

from mcp.server.connection import Connection
from mcp.server.runner import (
    ServerRunner,
    _has_modern_envelope,
    _replay_from_opening_request,
    _serve_modern_stream,
    aclose_shielded,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import INVALID_REQUEST

from sentinel_mcp.gateway.stdio_lean_calls import StdioLeanCalls


async def serve_stdio_eras(server: Any, read_stream: Any, write_stream: Any, *, lifespan_state: Any,
                           init_options: Any, lean: StdioLeanCalls) -> None:
    try:
        async with _replay_from_opening_request(read_stream) as (opening, replayed):
            opens_modern = (opening is not None and opening.method != "initialize"
                            and _has_modern_envelope(opening.params))
            if opens_modern:
                await _serve_modern_stream(server, replayed, write_stream, lifespan_state=lifespan_state,
                                           raise_exceptions=False)
            else:
                await _serve_legacy(server, replayed, write_stream, lifespan_state=lifespan_state,
                                    init_options=init_options, lean=lean)
    finally:
        await write_stream.aclose()


async def _serve_legacy(server: Any, read_stream: Any, write_stream: Any, *, lifespan_state: Any,
                        init_options: Any, lean: StdioLeanCalls) -> None:
    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
        read_stream, write_stream, raise_handler_exceptions=False, inline_methods=frozenset({"initialize"}))
    connection = Connection.for_loop(dispatcher, session_id=None)
    runner = ServerRunner(server, connection, lifespan_state, init_options=init_options)
    lean.adopt(dispatcher, connection)

    async def on_request(dctx: Any, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        if method != "initialize" and _has_modern_envelope(params):
            raise MCPError(
                code=INVALID_REQUEST,
                message="this connection serves the handshake protocol era; "
                "requests carrying the 2026-07-28 envelope are not accepted on it",
            )
        return await runner.on_request(dctx, method, params)

    try:
        await dispatcher.run(on_request, runner.on_notify)
    finally:
        lean.adopt(None, None)
        await aclose_shielded(connection)
