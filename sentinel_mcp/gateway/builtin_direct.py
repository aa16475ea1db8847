"""Calling an in-process built-in's tool in the caller's task, without the in-memory MCP client/server pair.

A built-in is mounted through the SDK's in-memory transport: every call is framed as a JSON-RPC request, put
on a memory stream, picked up by the server's dispatcher task, answered on another stream and matched back
(issue 21: ~13 % of the gateway's event loop on a no-op built-in). For the tools a built-in declares never ask
their caller anything (``BuiltinTraits.direct_tools``), this dispatcher hands the ``tools/call`` straight to
the SDK's own request kernel (``ServerRunner.on_request``: the same surface validation, handler, middleware
and wire shaping as the in-memory server) and gives the result dict back to the client session, which parses
and checks it exactly as it parses an answer off the wire. Every other request, and every call of a tool not
declared, takes the in-memory path unchanged.

What the in-memory pair did and this keeps: the request's ``_meta`` (with a ``progressToken`` when the caller
wants progress), progress reports (straight to the caller's callback), request-scoped log lines (to the
upstream's log relay), the time limit (``opts["timeout"]``, as the JSON-RPC dispatcher's -32001), cancellation
(the handler runs in the caller's task, so cancelling the call cancels it), and the error shapes (``MCPError``
as is, a pydantic ``ValidationError`` as -32602, anything else as code 0 with its text, like the SDK's
dispatcher). A declared tool that asks anyway gets the SDK's ``NoBackChannelError`` (the 2026-07-28 rule), an
error, never a silent answer.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import anyio
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.runner import ServerRunner
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.transport_context import TransportContext
from mcp.types import ErrorData, Implementation, LoggingMessageNotificationParams
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp import __version__
from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner, span_records_nothing

log = logging.getLogger(__name__)

REQUEST_TIMEOUT = -32001
_TRANSPORT = TransportContext(kind="in-process", can_send_request=False)


def lowlevel(server: Any) -> Any:
    """The low-level ``Server`` of an ``MCPServer`` (what the in-memory transport runs too)."""
    inner = getattr(server, "_lowlevel_server", None)
    return inner if inner is not None else server


@dataclass
class _CallContext:
    """A ``DispatchContext`` for one direct call: progress and log lines go to the caller; no back channel."""

    request_id: int
    on_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None
    on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]]
    transport: TransportContext = _TRANSPORT
    message_metadata: None = None
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        if method == "notifications/message" and params is not None:
            try:
                await self.on_log(LoggingMessageNotificationParams.model_validate(dict(params)))
            except Exception:  # noqa: BLE001 - a log line never fails the call (as on the wire)
                log.debug("dropped a log line of a direct call", exc_info=True)
        elif method == "notifications/progress" and params is not None:
            await self.progress(params.get("progress", 0.0), params.get("total"), params.get("message"))

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if self.on_progress is None:
            return
        try:
            await self.on_progress(progress, total, message)
        except Exception:  # noqa: BLE001 - same boundary as the SDK's shielded progress callback
            log.exception("progress callback raised")


class DirectDispatcher:
    """Wraps a connected in-memory session's dispatcher; ``tools/call`` of a declared tool runs in-task."""

    def __init__(
        self,
        inner: Any,
        server: Any,
        tools: frozenset[str],
        connection: Connection,
        lifespan_state: Any,
        on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]],
    ) -> None:
        self._inner = inner
        self._server = lowlevel(server)
        self._runner = ServerRunner(self._server, connection, lifespan_state)
        # the same kernel without the server's OpenTelemetry span, for calls where it would record nothing
        self._unspanned = UnspannedRunner(self._server, connection, lifespan_state)
        self.tools = tools
        self._on_log = on_log
        self._ids = count(1)
        self.direct_calls = 0  # how many calls took this path (tests and the benchmark read it)

    def __getattr__(self, name: str) -> Any:  # everything else is the in-memory session's dispatcher
        return getattr(self._inner, name)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        if method != "tools/call" or params is None or params.get("name") not in self.tools:
            return await self._inner.send_raw_request(method, params, opts)  # type: ignore[no-any-return]
        opts = opts or {}
        request_id = next(self._ids)
        out = dict(params)
        on_progress = opts.get("on_progress")
        if on_progress is not None:  # what the JSON-RPC dispatcher stamps: the server reports against it
            out["_meta"] = {**(out.get("_meta") or {}), "progressToken": request_id}
        dctx = _CallContext(request_id, on_progress, self._on_log)
        self.direct_calls += 1
        limit = opts.get("timeout")
        # a bare scope: anyio.fail_after's generator context costs about a tenth of this path
        deadline = anyio.current_time() + limit if limit is not None else math.inf
        try:
            with anyio.CancelScope(deadline=deadline):
                quiet = span_records_nothing(out.get("_meta") or {})
                return await (self._unspanned if quiet else self._runner).on_request(dctx, method, out)
            # here only when the deadline cancelled the call (a cancel from outside propagates)
            raise MCPError(
                code=REQUEST_TIMEOUT,
                message=f"Timed out while waiting for response to tools/call. Waited {limit} seconds.",
            )
        except MCPError:
            raise
        except Exception as e:  # noqa: BLE001 - shaped as the SDK's dispatcher shapes a handler's failure
            error = handler_exception_to_error_data(e)
            if error is None:
                log.error("built-in handler for tools/call raised", exc_info=e)
                error = ErrorData(code=0, message=str(e))
            raise MCPError.from_error_data(error) from None


@asynccontextmanager
async def direct_path(
    client: Client,
    server: Any,
    tools: frozenset[str],
    on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]],
) -> AsyncIterator[DirectDispatcher | None]:
    """While connected: ``tools/call`` of ``tools`` bypasses the in-memory pair (nothing declared, or a
    2026-07-28 connection: no change).

    The server's lifespan is entered once more for the direct kernel (the in-memory server entered its own);
    the connection the kernel sees carries the negotiated version, the gateway's client info and the
    capabilities the session advertised, and no standalone channel (a declared tool sends nothing outside its
    call's own progress and log lines)."""
    version = client.protocol_version or "2025-11-25"
    # a 2026-07-28 connection to an in-process server is already the SDK's own in-task peer pair (no streams)
    if not tools or version in MODERN_PROTOCOL_VERSIONS:
        yield None
        return
    session = client.session
    connection = Connection.from_envelope(
        version,
        Implementation(name="sentinel-mcp", version=__version__).model_dump(by_alias=True, exclude_none=True),
        session._build_capabilities(version).model_dump(by_alias=True, exclude_none=True),
    )
    inner = lowlevel(server)
    async with inner.lifespan(inner) as lifespan_state:
        wrapped = DirectDispatcher(session._dispatcher, server, tools, connection, lifespan_state, on_log)
        session._dispatcher = wrapped  # type: ignore[assignment]  # the session's one way to its server
        try:
            yield wrapped
        finally:
            session._dispatcher = wrapped._inner
