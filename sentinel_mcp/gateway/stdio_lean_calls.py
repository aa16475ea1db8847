"""The lean path over stdio: a ``tools/call`` read off stdin, served without the SDK's dispatcher.

The SDK hands every request on a stdio connection through a replay stream and its JSON-RPC dispatcher (a
memory stream, a task per request, the OpenTelemetry middleware, a response model and its pydantic dump):
about a fifth of the gateway's event-loop time per call, more than the guard. The common call needs none of
it. ``stdio_transport`` offers each line it parsed here first and takes back what is not taken:

- only once the client's first request has decided the connection's era, as the SDK decides it
  (``serve_dual_era_loop``: a request other than ``initialize`` carrying the envelope's version key opens
  the 2026-07-28 era, anything else the handshake era); that request itself always goes to the SDK;
- a request with an id, ``method: tools/call``, params an object, in a line the SDK's parser is sure to
  accept (``sdk_accepts``), without a progress token in ``_meta`` (the SDK would send notifications under
  it); on 2026-07-28, no log level either and an envelope the SDK's own ladder accepts
  (``classify_inbound_request``); on the handshake era, once the handshake let calls in, without the 2026
  envelope (the SDK refuses it there) or a ``_meta`` key that could carry a trace.

A modern call runs through the SDK's own kernel (``unspanned_kernel.serve_call``: params validation, the
server's middleware, ``Front.call_tool``) under a dispatch context like the one the modern stream builds (no
server requests; notifications ride the pipe); its answer, or its error mapped as ``_serve_modern_stream``
maps it, is one compact line. A handshake-era call runs in the SDK dispatcher's own in-flight table and
context (``stdio_eras`` shows the dispatcher here), so the guard's questions (elicitation), cancellation and
log lines take the SDK's ways; its answer follows the notifications sent for it. Either way the guard, the
write-ahead audit and input-request rounds behave as on the SDK path. A cancelled call is never answered (as
the dispatcher does); a call still running when the connection ends is answered "Connection closed" unless
its answer had started. ``notifications/cancelled`` is passed on to the SDK as well, as the dispatcher tees
it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable, Coroutine, Mapping

import anyio
from mcp.server.connection import Connection, NotifyOnlyOutbound
from mcp.server.runner import _has_modern_envelope, modern_error_data
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request
from mcp.shared.jsonrpc_dispatcher import (
    _InFlight,
    _JSONRPCDispatchContext,
    cancelled_request_id_from_params,
    handler_exception_to_error_data,
)
from mcp.shared.transport_context import TransportContext
from mcp_types import CONNECTION_CLOSED, LOG_LEVEL_META_KEY, ErrorData, JSONRPCError, JSONRPCNotification

from sentinel_mcp.core.json_text import compact_encoder
from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.gateway.plain_calls import PlainCalls, plain_handshake_params
from sentinel_mcp.gateway.quick_event import new_cancel_scope, new_event
from sentinel_mcp.gateway.unspanned_kernel import (
    UnspannedRunner,
    serve_call,
    serve_checked_call,
    span_records_nothing,
)

log = logging.getLogger(__name__)
TRANSPORT = TransportContext(kind="jsonrpc", can_send_request=False)
LEGACY_TRANSPORT = TransportContext(kind="jsonrpc", can_send_request=True)  # the dispatcher's default
CLOSING_WRITE_SECONDS = 2.0  # as the dispatcher bounds its shutdown answer
# compact, and strict: a NaN or infinity a hostile upstream put in a result is not valid JSON; such an answer
# is written by pydantic instead (they become null, as on the SDK's path). Its C encoder built once
# (core/json_text.py)
_COMPACT = compact_encoder(allow_nan=False)

SendLine = Callable[[str], Awaitable[None]]
LineOf = Callable[[Any], str]  # a protocol message as one line, as the transport writes the SDK's
# a line written after what the SDK's writer holds (its stream); the id it answers
Ordered = Callable[[str, Any], Awaitable[None]]
# an answer to this id is about to be written, or its call settled without one (the transport's in-flight ids)
Answered = Callable[[Any], None]
# the server and its lifespan state once ``Server.run``'s lifespan has started (None before and after)
Target = Callable[[], "tuple[Any, Any] | None"]


class _CallContext:
    """The dispatch context of one lean call: what the modern stream's ``_NoServerRequestsDispatchContext``
    over the dispatcher's own context gives a handler (no progress token here: such calls go to the SDK)."""

    __slots__ = ("request_id", "cancel_requested", "_calls", "_closed")
    transport = TRANSPORT
    message_metadata = None
    can_send_request = False

    def __init__(self, request_id: Any, calls: "StdioLeanCalls") -> None:
        self.request_id = request_id
        self.cancel_requested = new_event()
        self._calls = calls
        self._closed = False

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> Any:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        if self._closed:
            log.debug("dropped %s: dispatch context closed", method)
            return
        await self._calls.notify(method, params, opts)

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None

    def close(self) -> None:
        self._closed = True


class StdioLeanCalls:
    """Takes the common ``tools/call`` of a stdio connection off the SDK's dispatcher (module doc)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.modern: bool | None = None  # the connection's era, once its first request decided it
        self.plain = PlainCalls()
        self.outbound = NotifyOnlyOutbound(self)  # connection-level notifications ride the pipe
        self._in_flight: dict[Any, _InFlight[Any]] = {}  # as the dispatcher keeps its own (cancellation)
        self._send_line: SendLine | None = None
        self._line_of: LineOf | None = None
        self._ordered: Ordered | None = None
        self._answered: Answered = _nobody
        # bare tasks (anyio's start_soon cost ~4 % of a call), cancelled and awaited by ``close``
        self._tasks: set[asyncio.Task[None]] = set()
        # a handshake-era connection's dispatcher and connection (``stdio_eras``), while it serves
        self._legacy: tuple[Any, Connection] | None = None

    def bind(self, send_line: SendLine, line_of: LineOf, ordered: Ordered | None = None,
             answered: Answered | None = None) -> None:
        """The transport's writer, its way of writing a message, its writer behind the SDK's stream (a
        handshake-era answer must follow the notifications the dispatcher sent for the call, which go that
        way), and whom to tell of an answer about to be written (its id leaves the transport's in-flight
        ids)."""
        self._send_line, self._line_of, self._ordered = send_line, line_of, ordered
        self._answered = answered if answered is not None else _nobody

    def _spawn(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        self._tasks.add(running_loop().create_task(self._tracked(fn, args)))

    async def _tracked(self, fn: Callable[..., Coroutine[Any, Any, None]], args: tuple[Any, ...]) -> None:
        """The call, leaving the running set as it ends (a done callback would cost the loop a turn per call;
        issue 21). One cancelled before it started stays in the set, which only ``close`` cancels."""
        try:
            await fn(*args)
        finally:
            # the loop named: ``current_task()`` would ask ``get_running_loop`` (a getpid on 3.11)
            self._tasks.discard(asyncio.current_task(running_loop()))  # type: ignore[arg-type]

    async def close(self) -> None:
        """The connection ends: every call still running is cancelled (each answers "Connection closed" if
        its answer had not started) and waited for, a bounded time, as the transport's task group would."""
        running = list(self._tasks)
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running, timeout=CLOSING_WRITE_SECONDS + 1.0)

    def adopt(self, dispatcher: Any, connection: Connection | None) -> None:
        """A handshake-era connection started serving (None, None: it stopped)."""
        self._legacy = None if dispatcher is None or connection is None else (dispatcher, connection)

    # --- what the transport offers

    def take(self, message: dict[str, Any]) -> bool:
        """Serve ``message`` here if it is the common call (module doc); it must be a line the SDK's parser is
        sure to accept. False: the transport hands it to the SDK, and then tells ``seen``."""
        if self.modern is None or self._send_line is None or message.get("method") != "tools/call":
            return False
        rid = message.get("id")
        if rid is None or isinstance(rid, bool) or not isinstance(rid, (int, str)):
            return False
        params = message.get("params")
        if type(params) is not dict:
            return False
        if self.modern is False:
            return self._take_legacy(rid, params)
        meta = params.get("_meta")
        if type(meta) is not dict or "progressToken" in meta or LOG_LEVEL_META_KEY in meta:
            return False
        target = self.target()
        if target is None:
            return False
        # plain params (their envelope a mapping holding both required keys, the version 2026-07-28: a
        # supported one) pass every rung of the ladder, so it is asked only of the others
        connection = self.plain.connection(params, outbound=self.outbound)
        checked = connection is not None
        if connection is None:
            verdict = classify_inbound_request({"method": "tools/call", "params": params})
            if not isinstance(verdict, InboundModernRoute):
                return False  # the SDK answers with the ladder's error
            connection = Connection.from_envelope(verdict.protocol_version, verdict.client_info,
                                                  verdict.client_capabilities, outbound=self.outbound)
        server, lifespan_state = target
        # in the table before the task starts: a cancellation read right after the call finds it
        dctx = _CallContext(rid, self)
        scope = new_cancel_scope()
        self._in_flight[coerce_request_id(rid)] = _InFlight(scope=scope, dctx=dctx)  # type: ignore[arg-type]
        self._spawn(self._serve, server, lifespan_state, rid, params, connection, checked, scope, dctx)
        return True

    def _take_legacy(self, rid: Any, params: dict[str, Any]) -> bool:
        """A handshake-era ``tools/call``: taken once the handshake let the connection's calls in, when it has
        no progress token, no ``_meta`` key that could carry a trace, and no 2026 envelope (the SDK refuses
        those on this era, and says so)."""
        legacy, target = self._legacy, self.target()
        if legacy is None or target is None or self._ordered is None:
            return False
        meta = params.get("_meta")
        if meta is not None and (type(meta) is not dict or "progressToken" in meta
                                 or not span_records_nothing(meta) or _has_modern_envelope(params)):
            return False
        dispatcher, connection = legacy
        if not connection.initialize_accepted:
            return False  # the SDK answers as it does before the handshake
        server, lifespan_state = target
        # in the dispatcher's table before the task starts: a cancellation the SDK reads next finds it
        dctx = _JSONRPCDispatchContext(transport=LEGACY_TRANSPORT, _dispatcher=dispatcher, _request_id=rid,
                                       message_metadata=None, _progress_token=None)
        scope = new_cancel_scope()
        dispatcher._in_flight[coerce_request_id(rid)] = _InFlight(scope=scope, dctx=dctx)
        self._spawn(self._serve_legacy, dispatcher, UnspannedRunner(server, connection, lifespan_state), rid,
                    params, scope, dctx)
        return True

    def seen(self, message: dict[str, Any]) -> None:
        """A message handed to the SDK: its first request decides the era, as the SDK's own loop decides it;
        a cancellation naming a lean call cancels that call."""
        method = message.get("method")
        if self.modern is None and "id" in message and method is not None:
            self.modern = method != "initialize" and _has_modern_envelope(message.get("params"))
        if method == "notifications/cancelled":
            rid = cancelled_request_id_from_params(message.get("params"))
            if rid is not None:
                key = coerce_request_id(rid)
                entry = self._in_flight.get(key)
                if entry is not None:
                    entry.dctx.cancel_requested.set()
                    entry.scope.cancel()

    # --- serving

    async def send_raw_request(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> Any:
        raise NoBackChannelError(method)  # the 2026 era has no server-to-client requests

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: Any = None) -> None:
        """A notification on the pipe (what the dispatcher's ``notify`` writes for stdio)."""
        assert self._send_line is not None and self._line_of is not None
        if params is not None:
            msg = JSONRPCNotification(jsonrpc="2.0", method=method, params=dict(params))
        else:
            msg = JSONRPCNotification(jsonrpc="2.0", method=method)
        await self._send_line(self._line_of(msg))

    async def _serve(self, server: Any, lifespan_state: Any, rid: Any, params: dict[str, Any],
                     connection: Connection, checked: bool, scope: anyio.CancelScope,
                     dctx: "_CallContext") -> None:
        """One call, entered in ``_in_flight`` by ``take`` (a duplicate id overwrote the entry, as the
        dispatcher's table does; its removal is guarded below)."""
        assert self._send_line is not None and self._line_of is not None
        key = coerce_request_id(rid)
        answering = False
        try:
            with scope:
                try:
                    try:
                        result = await serve_call(server, dctx, params, connection=connection,
                                                  lifespan_state=lifespan_state, checked=checked)
                        line = self._answer(rid, result)
                    except Exception as exc:  # noqa: BLE001 - mapped to the wire as the modern stream maps it
                        error = handler_exception_to_error_data(exc) or modern_error_data(exc)
                        line = self._line_of(JSONRPCError(jsonrpc="2.0", id=rid, error=error))
                finally:
                    dctx.close()
                    _leave(self._in_flight, key, dctx)
                if not dctx.cancel_requested.is_set():
                    answering = True
                    self._answered(rid)
                    await self._send_line(line)
        except anyio.get_cancelled_exc_class():
            if not answering and not dctx.cancel_requested.is_set():
                await self._connection_closed(rid)
            raise
        finally:
            if not answering:
                self._answered(rid)  # settled unanswered (cancelled): its id is free again

    async def _connection_closed(self, rid: Any) -> None:
        """The connection is ending with the call unanswered (its answer had not started and the client did
        not cancel it): "Connection closed", as the dispatcher answers, shielded and bounded."""
        assert self._send_line is not None and self._line_of is not None
        closed = JSONRPCError(jsonrpc="2.0", id=rid,
                              error=ErrorData(code=CONNECTION_CLOSED, message="Connection closed"))
        with anyio.move_on_after(CLOSING_WRITE_SECONDS, shield=True):
            await self._send_line(self._line_of(closed))

    async def _serve_legacy(self, dispatcher: Any, runner: UnspannedRunner, rid: Any,
                            params: dict[str, Any], scope: anyio.CancelScope, dctx: Any) -> None:
        """The dispatcher's ``_handle_request`` for one call, in the dispatcher's own in-flight table (so the
        SDK's handling of ``notifications/cancelled`` cancels it), its answer written behind whatever the
        dispatcher sent for it."""
        assert self._ordered is not None and self._line_of is not None
        key = coerce_request_id(rid)
        answering = False
        try:
            with scope:
                try:
                    try:
                        # params the kernel's surface check is sure to accept run the kernel without it
                        # (the same result or the same exception), as on the 2025 HTTP session path
                        if plain_handshake_params(params, runner.connection.protocol_version):
                            result = await serve_checked_call(runner, dctx, params)
                        else:
                            result = await runner.on_request(dctx, "tools/call", params)
                        line = self._answer(rid, result)
                    except Exception as exc:  # noqa: BLE001 - mapped to the wire as the dispatcher maps it
                        error = handler_exception_to_error_data(exc)
                        if error is None:
                            log.exception("handler for 'tools/call' raised")
                            error = ErrorData(code=0, message=str(exc))  # the dispatcher's catch-all
                        line = self._line_of(JSONRPCError(jsonrpc="2.0", id=rid, error=error))
                finally:
                    dctx.close()
                    _leave(dispatcher._in_flight, key, dctx)
                if not dctx.cancel_requested.is_set():
                    answering = True
                    await self._ordered(line, rid)
        except anyio.get_cancelled_exc_class():
            if not answering and not dctx.cancel_requested.is_set():
                await self._connection_closed(rid)
            raise
        finally:
            if not answering:
                self._answered(rid)  # settled unanswered (cancelled): its id is free again

    def _answer(self, rid: Any, result: dict[str, Any]) -> str:
        try:
            return _COMPACT({"jsonrpc": "2.0", "id": rid, "result": result})
        except (ValueError, TypeError):
            from mcp_types import JSONRPCResponse

            assert self._line_of is not None
            return self._line_of(JSONRPCResponse(jsonrpc="2.0", id=rid, result=result))


def _nobody(rid: Any) -> None:
    return None


def _leave(table: dict[Any, Any], key: Any, dctx: Any) -> None:
    """A call's entry out of its in-flight table, unless a later request with the same id replaced it."""
    entry = table.get(key)
    if entry is not None and entry.dctx is dctx:
        del table[key]
