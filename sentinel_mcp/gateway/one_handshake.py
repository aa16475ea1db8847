"""The front's middleware that refuses a second ``initialize`` on a connection that has one.

The SDK answers every ``initialize`` and commits its params over the first: on an open stdio connection or
``Mcp-Session-Id`` session a client could swap its protocol version, its name and its capabilities mid-
conversation (Sentinel pushes questions only to a client that declared elicitation, and relays by what was
declared). What was negotiated stays for the connection's life: a repeated ``initialize`` is an
``INVALID_REQUEST`` error and nothing of the connection changes (the SDK commits only when the chain
succeeds)."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST
from mcp.types.version import MODERN_PROTOCOL_VERSIONS


def one_handshake(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Awaitable[HandlerResult]:
    # the next link's awaitable is handed back, not awaited in a coroutine of this middleware's, which each
    # resumption of the request's task would run through (issue 21; the SDK's ``_apply_middleware`` hands
    # back what a middleware returns); the refusal raises where the chain is awaited, as it did
    # a 2026-era connection has no handshake: its ``initialize`` is the SDK's to refuse
    if (ctx.method == "initialize" and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and ctx.session.client_params is not None):
        if ctx.request_id is None:  # a notification: no one to answer, and a raise is a logged traceback
            return _nothing()
        raise MCPError(code=INVALID_REQUEST, message="this connection is already initialized; its "
                       "protocol version, client and capabilities stay as first negotiated")
    return call_next(ctx)


async def _nothing() -> HandlerResult:
    return None
