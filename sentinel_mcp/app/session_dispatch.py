"""Each handshake-era HTTP session's dispatcher, kept while the session is served, and a request handed to it
directly: the lean 2025 path's ``tools/call`` (``lean_session_calls.py``).

The SDK's session manager serves a session with ``serve_loop``: a ``JSONRPCDispatcher`` whose read loop
takes each message from a memory stream the transport writes, matches it, and spawns the request's handler
in the loop's task group, through a ``ServerRunner`` whose outermost middleware is the OpenTelemetry span.
The lean path used to put its request into that stream. Now it hands the request to the same dispatcher as
its read loop would (``_dispatch_request``, line for line: the same dispatch context, the same in-flight
entry, so a cancellation the client posts finds the call; the handler spawned by the dispatcher's own
``_spawn`` into its task group with the sender's context, so the session's end cancels it and it is answered
as the SDK answers it); the answer and every message of the call still go out through the session's
transport to the request's own stream. Skipped: the memory stream's hop and the read loop's turn, and the
span when it would record nothing (``unspanned_kernel.span_records_nothing``: no tracer provider, no trace
context in ``_meta``). Measured: about a seventh of the gateway's CPU per 2025-era call (2.80 -> 2.42 ms,
benchmarks/README.md).

``serve_loop`` here is the SDK's (``mcp.server.runner.serve_loop``), the same dispatcher and connection
built the same way, plus the entry kept while it runs; ``install`` puts it where the manager looks it up. A
session is found by its transport's read stream (the object the manager passed to ``serve_loop``), never by
anything a client sends. Anything unusual (the loop not started yet or ended, the transport context not
built) leaves the request to the stream, as before.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server import streamable_http_manager
from mcp.server.connection import Connection
from mcp.server.runner import serve_connection
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import (
    JSONRPCDispatcher,
    _InFlight,
    _JSONRPCDispatchContext,
    progress_token_from_params,
)
from mcp_types import JSONRPCRequest

from sentinel_mcp.gateway.plain_calls import plain_handshake_params
from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner, serve_checked_call, span_records_nothing

log = logging.getLogger(__name__)


@dataclass(slots=True)
class SessionKernel:
    """What serves one session: the SDK's dispatcher, and the runner without the span over its connection."""

    dispatcher: JSONRPCDispatcher[Any]
    unspanned: UnspannedRunner
    read_stream: Any


# id of the read stream -> its session's kernel, while ``serve_loop`` runs (the stream object is checked too:
# an id is reused once its object is gone)
_KERNELS: dict[int, SessionKernel] = {}


async def serve_loop(
    server: Any,
    read_stream: Any,
    write_stream: Any,
    *,
    lifespan_state: Any,
    session_id: str | None = None,
    init_options: Any = None,
    raise_exceptions: bool = False,
) -> None:
    """``mcp.server.runner.serve_loop``, the same recipe, with the session's kernel kept while it runs."""
    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
        read_stream,
        write_stream,
        raise_handler_exceptions=raise_exceptions,
        inline_methods=frozenset({"initialize"}),
    )
    connection = Connection.for_loop(dispatcher, session_id=session_id)
    key = id(read_stream)
    unspanned = UnspannedRunner(server, connection, lifespan_state)
    _KERNELS[key] = SessionKernel(dispatcher, unspanned, read_stream)
    try:
        await serve_connection(server, dispatcher, connection=connection, lifespan_state=lifespan_state,
                               init_options=init_options)
    finally:
        if (kept := _KERNELS.get(key)) is not None and kept.read_stream is read_stream:
            del _KERNELS[key]


def install() -> None:
    """The session manager serves its sessions with ``serve_loop`` above (it looks the name up in its module
    at each session's start)."""
    streamable_http_manager.serve_loop = serve_loop  # type: ignore[assignment]


def kernel_of(read_stream: Any) -> SessionKernel | None:
    kernel = _KERNELS.get(id(read_stream)) if read_stream is not None else None
    return kernel if kernel is not None and kernel.read_stream is read_stream else None


def dispatch(kernel: SessionKernel, message: JSONRPCRequest, metadata: Any) -> bool:
    """The request handed to the session's dispatcher as its read loop hands one (``_dispatch_request``),
    the handler run by the unspanned runner when the span would record nothing. False: nothing was done (the
    loop is not running, the transport context could not be built); the caller sends it down the stream."""
    dispatcher = kernel.dispatcher
    # the read loop runs (its task group open, the stream not at its end); checked and used without an await
    # between, so the loop cannot end in between
    if dispatcher._tg is None or not dispatcher._running or dispatcher._closed:
        return False
    params = message.params
    meta = params.get("_meta", {}) if isinstance(params, dict) else {}
    if not isinstance(meta, dict) or not span_records_nothing(meta):
        return False  # the span may record something: the runner with its span, on the SDK's own path
    try:
        transport_ctx = dispatcher._transport_builder(metadata)
    except Exception:  # noqa: BLE001 - the read loop would answer INTERNAL_ERROR; the stream path does that
        log.debug("transport context not built for request %r; sent down the stream", message.id)
        return False
    dctx = _JSONRPCDispatchContext(
        transport=transport_ctx,
        _dispatcher=dispatcher,
        _request_id=message.id,
        message_metadata=metadata,
        _progress_token=progress_token_from_params(params),
    )
    scope = anyio.CancelScope()
    dispatcher._in_flight[coerce_request_id(message.id)] = _InFlight(scope=scope, dctx=dctx)
    # started at once: the caller waits for the answer without a checkpoint first (``receive_asleep.py``),
    # so the handler's first step runs with nothing else queued and its audit rows find the loop idle
    dispatcher._spawn(
        dispatcher._handle_request,
        message,
        dctx,
        scope,
        handler_of(kernel.unspanned, message),
        sender_ctx=contextvars.copy_context(),
    )
    return True


def handler_of(runner: UnspannedRunner, message: JSONRPCRequest) -> Callable[..., Awaitable[Any]]:
    """The runner's ``on_request``; for a ``tools/call`` whose params the kernel's surface check is sure to
    accept (``plain_calls.plain_handshake_params``), the same kernel without that check
    (``unspanned_kernel.serve_checked_call``: the same result or the same exception, ~10 us a call less)."""
    params = message.params
    if message.method == "tools/call" and plain_handshake_params(params, runner.connection.protocol_version):

        async def checked(dctx: Any, method: str, given: Any) -> Any:
            # never otherwise: the dispatcher hands on what it was given
            if method != "tools/call" or given is not params or params is None:
                return await runner.on_request(dctx, method, given)
            return await serve_checked_call(runner, dctx, params)

        return checked
    return runner.on_request

