"""The lean 2025 path: a ``tools/call`` POSTed on an open handshake-era session (``Mcp-Session-Id``),
answered on its own event stream without the SDK's per-POST machinery.

The SDK answers such a POST with an ``EventSourceResponse``: a task group of five tasks (the stream, a ping
timer, a shutdown listener, a disconnect listener, the writer from the request's queue to an SSE queue),
inside another task group, after Starlette's routing, a ``Request``, the body read again and the session
manager's look-ups (what it cost: benchmarks/README.md, branch i21-legacy-http). The request itself is the
one the SDK would handle (its message validated by the SDK's adapter, the SDK's metadata), handed to the
session's own dispatcher as its read loop would hand it, without the memory stream in between
(``session_dispatch.py``), so an elicitation or a log notification the handler sends, a cancellation the
client posts, the answer to a cancelled request, a session deleted or timed out mid-call all travel as
before: through the transport's queue for this request, which this path drains itself. The
bytes it writes are the ``EventSourceResponse``'s: the same head (built by that class), each event framed by
sse-starlette, the empty last chunk after the answer or when the session ends the queue; a ping comment every
15 s of a long call; a client that goes away or a server shutting down ends the stream without that chunk
(all watched by one task, started only for a call still running after ``WATCH_AFTER`` seconds: a short call
pays for none of it). Differences: the head waits for the first event (at most ``WATCH_AFTER``), and the
answer's event goes out with the last chunk, so a short call's whole answer is one system call where the SDK
makes three (and the client wakes once). And an answer that is the first thing to send (nothing streamed
before it, no head out yet: the common call) is written as one JSON response, as the SDK's JSON-response mode
writes it (the client's Accept takes both, and the transport may answer a POST either way): the SDK's own
client closes its connection after every event-stream answer (it stops reading at the answer's event, before
the last chunk), so an SSE answer cost it and the gateway a TCP connection per call; a JSON one keeps it.

Taken only when every check the SDK would make passes and the session's transport is in the state the SDK
path assumes (no event store, SSE mode, no Host/Origin settings of its own, not terminated, not expiring, no
request of this id in flight), and the principal owns the session in both tables (``McpSessionOwners`` and
the manager's); a progress token goes to the SDK too. Anything else goes to the SDK unchanged (its body
replayed), which writes the same answer or rejection it always did.
"""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

import anyio
import pydantic_core
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE,
    MCP_SESSION_ID_HEADER,
    REQUEST_CANCELLED,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    StreamableHTTPServerTransport,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import DEFAULT_NEGOTIATED_VERSION, JSONRPCError, JSONRPCRequest, JSONRPCResponse
from mcp_types import jsonrpc_message_adapter
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from sse_starlette.event import ServerSentEvent, ensure_bytes
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_mcp.app.lean_calls import HEAD_HOLDER_KEY, MESSAGE_KEY, accepts_json_and_sse
from sentinel_mcp.app.receive_asleep import receive_asleep
from sentinel_mcp.core.media_type import CANONICAL
from sentinel_mcp.app.session_dispatch import dispatch, kernel_of
from sentinel_mcp.identity.resolver import SCOPE_KEY

if TYPE_CHECKING:
    from sentinel_mcp.app.http_protocol import HeadHoldingTransport

log = logging.getLogger(__name__)

SEP = EventSourceResponse.DEFAULT_SEPARATOR
PING_SECONDS = EventSourceResponse.DEFAULT_PING_INTERVAL
WATCH_AFTER = 1.0  # a call still running this long gets the disconnect, shutdown and ping watcher
_VERSIONS = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
# headers read here, each sent at most once (CallerGuard refuses a second session id or version)
_READ = frozenset((b"mcp-session-id", b"mcp-protocol-version", b"content-type", b"accept", b"last-event-id"))

# the session manager and the owner of each session id as McpSessionOwners keeps it, while the runtime runs
Target = Callable[[], "tuple[StreamableHTTPSessionManager, Callable[[str], str | None]] | None"]


class LeanSessionCalls:
    """ASGI middleware: serve a 2025-era ``tools/call`` on an open session, pass the rest to ``app``."""

    def __init__(self, app: ASGIApp, *, target: Target) -> None:
        self.app = app
        self.target = target

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = scope.get(MESSAGE_KEY)
        target = self.target() if message is not None else None
        found = _lean_request(scope, message) if target is not None else None
        if target is None or found is None:
            return await self.app(scope, receive, send)
        sid, version = found
        manager, owner_of = target
        transport = manager._server_instances.get(sid)
        if transport is None or not _usable(transport) or owner_of(sid) != _who(scope):
            return await self.app(scope, receive, send)
        user = scope.get("user")
        requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
        if requestor != manager._session_owners.get(sid):
            return await self.app(scope, receive, send)  # the SDK answers 404
        # the body as the SDK reads it (WireGuard replays it): its parser, its adapter
        body = await _body(receive)
        try:
            request = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
        except (ValueError, ValidationError):
            request = None
        replay = _replaying(body, receive)
        if (not isinstance(request, JSONRPCRequest) or request.method != "tools/call"
                or str(request.id) in transport._request_streams):
            return await self.app(scope, replay, send)
        await _serve(transport, request, version, scope, replay, send)


def _who(scope: Scope) -> str:
    return str(getattr(scope.get(SCOPE_KEY), "name", ""))


def _usable(transport: StreamableHTTPServerTransport) -> bool:
    """The transport is in the state the SDK's path for this POST assumes (anything else: the SDK decides)."""
    if transport._terminated or transport.is_json_response_enabled or transport._event_store is not None:
        return False
    if transport._read_stream_writer is None:
        return False
    if transport._security.settings.enable_dns_rebinding_protection:
        return False  # the SDK's own Host and Origin checks (CallerGuard's run first either way): asked there
    idle = transport.idle_scope
    return not (idle is not None and idle.cancel_called)


def _lean_request(scope: Scope, message: Any) -> tuple[str, str] | None:
    """(session id, protocol version) of a POST the lean path may take, or None."""
    if scope.get("path") != "/mcp" or scope.get("method") != "POST" or not isinstance(message, dict):
        return None
    if message.get("method") != "tools/call" or "id" not in message:
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and "progressToken" in meta:
        return None  # its notifications would travel the same way; left to the SDK all the same
    sid = version = content_type = accept = None
    for key, value in scope.get("headers", ()):
        key = key.lower()
        if key not in _READ:
            continue
        if key == b"last-event-id":
            return None
        if key == b"mcp-session-id":
            sid = value.decode("latin-1")
        elif key == b"mcp-protocol-version":
            version = value.decode("latin-1")
        elif key == b"content-type":
            if content_type is not None:
                return None  # sent twice: the SDK reads one of them; let it answer
            content_type = value
        elif accept is not None:
            return None
        else:
            accept = value
    if sid is None or content_type is None or accept is None:
        return None
    if version is not None and version not in _VERSIONS:
        return None  # the SDK routes it to the 2026 entry (or rejects it)
    # the one media type taken (WireGuard refused any other and wrote this one as CANONICAL), its Accept rule
    if content_type != CANONICAL:
        return None
    if not accepts_json_and_sse(accept):  # the SDK's rule, its verdicts kept per value (lean_calls.py)
        return None
    return sid, version if version is not None else DEFAULT_NEGOTIATED_VERSION


async def _body(receive: Receive) -> bytes:
    chunks = []
    more = True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def sse_head(transport: StreamableHTTPServerTransport) -> list[tuple[bytes, bytes]]:
    """The response head the SDK's ``EventSourceResponse`` sends for a POST or the GET of this session (made
    once per session; a copy each time, as a middleware may change a message's header list)."""
    head = _HEADS.get(transport)
    if head is None:
        sid = transport.mcp_session_id
        assert sid is not None  # the manager found it by this id
        headers = {"Cache-Control": "no-cache, no-transform", "Connection": "keep-alive",
                   "Content-Type": CONTENT_TYPE_SSE, MCP_SESSION_ID_HEADER: sid}
        made = EventSourceResponse(content=_NoContent(), headers=headers)
        head = _HEADS[transport] = tuple(made.raw_headers)
    return list(head)


_HEADS: weakref.WeakKeyDictionary[StreamableHTTPServerTransport, tuple[tuple[bytes, bytes], ...]] = (
    weakref.WeakKeyDictionary())


Head = list[tuple[bytes, bytes]]


def json_answer(transport: StreamableHTTPServerTransport, message: Any) -> tuple[int, Head, bytes]:
    """(status, head, body) of ``transport._create_json_response(message)``, the SDK's JSON answer, without a
    Starlette ``Response`` a call: its head is the same for every answer of a session but for the body's
    length, so it is taken from the SDK's own answer once per session (the last header that length, as
    Starlette puts it; anything else: the SDK's answer each time); the body is the same dump the SDK
    writes."""
    head = _JSON_HEADS.get(transport)
    if head is None:
        empty = transport._create_json_response(None)
        kept = tuple(empty.raw_headers)
        shaped = empty.status_code == 200 and kept and kept[-1] == (b"content-length", b"0")
        head = kept[:-1] if shaped else ()
        _JSON_HEADS[transport] = head
    if not head or message is None:
        response = transport._create_json_response(message)
        return response.status_code, response.raw_headers, bytes(response.body)
    body = message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
    return 200, [*head, (b"content-length", str(len(body)).encode("latin-1"))], body


# the SDK's JSON answer's head, less its length, per session (empty: not of that shape, built each time)
_JSON_HEADS: weakref.WeakKeyDictionary[StreamableHTTPServerTransport, tuple[tuple[bytes, bytes], ...]] = (
    weakref.WeakKeyDictionary())


class _NoContent:
    def __aiter__(self) -> _NoContent:
        return self

    async def __anext__(self) -> Any:
        raise StopAsyncIteration


async def _serve(transport: StreamableHTTPServerTransport, message: JSONRPCRequest, version: str,
                 scope: Scope, receive: Receive, send: Send) -> None:
    """What ``handle_request`` and ``_handle_post_request`` do for this POST, with one task instead of six."""
    idle = transport.idle_scope
    timed = idle is not None and transport._idle_timeout is not None
    if timed:  # the request holds the session open, as the SDK's handle_request counts it
        transport._requests_in_flight += 1
        idle.deadline = math.inf  # type: ignore[union-attr]
    try:
        await _stream(transport, message, version, scope, receive, send)
    finally:
        if timed:
            transport._requests_in_flight -= 1
            if not transport._requests_in_flight:
                idle.deadline = anyio.current_time() + transport._idle_timeout  # type: ignore[union-attr, operator]


async def _stream(transport: StreamableHTTPServerTransport, message: JSONRPCRequest, version: str,
                  scope: Scope, receive: Receive, send: Send) -> None:
    request_id = str(message.id)
    writer = transport._read_stream_writer
    assert writer is not None  # checked by _usable
    streams = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
    transport._request_streams[request_id] = streams
    reader = streams[1]
    state = _Stream(send, reader, sse_head(transport), scope.get(HEAD_HOLDER_KEY))
    loop = asyncio.get_running_loop()
    watch = loop.call_later(WATCH_AFTER, state.watch, receive)
    try:
        session_message = transport._create_session_message(message, Request(scope, receive), request_id,
                                                            version)
        kernel = kernel_of(transport._read_stream)
        if kernel is None or not dispatch(kernel, message, session_message.metadata):
            await writer.send(session_message)
        async with reader:
            # asleep at once: the handler's first step finds the loop idle (``receive_asleep.py``)
            event = await receive_asleep(reader)
            while not isinstance(event.message, JSONRPCResponse | JSONRPCError):
                body = ensure_bytes(transport._create_event_data(event), SEP)
                await state.send({"type": "http.response.body", "body": body, "more_body": True})
                event = await reader.receive()
            await state.answer(transport, event)
    except anyio.EndOfStream:
        pass  # the queue ended before an answer, as the SDK's ``async for`` over it ends
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass  # the session ended (its queues closed), or the watcher ended the stream
    except Exception:  # noqa: BLE001 - as the SDK's stream writer: logged, the stream ended
        log.exception("Error in the lean SSE stream of request %s", request_id)
    finally:
        watch.cancel()
        state.stop()
        await transport._clean_up_memory_streams(request_id)
    if state.active and not state.aborted:  # the SDK ends a stream it did not drop with an empty chunk
        await state.send({"type": "http.response.body", "body": b"", "more_body": False}, last=True)


def _cancelled(event: EventMessage) -> bool:
    message = event.message
    return isinstance(message, JSONRPCError) and message.error.code == REQUEST_CANCELLED


class _Stream:
    """One POST's event stream: its head (sent with the first event, or when the watcher starts, whichever is
    first), its sends in order, and the watcher a long call gets."""

    def __init__(self, send: Send, reader: MemoryObjectReceiveStream[EventMessage],
                 head: list[tuple[bytes, bytes]], holder: HeadHoldingTransport | None = None) -> None:
        self._send = send
        self._reader = reader
        self._head = head
        self._holder = holder  # the connection's head holder (app/http_protocol.py), when it has one
        self._lock = asyncio.Lock()
        self.started = False
        self.active = True  # the last chunk is not sent yet
        self.aborted = False  # the client went away or the server is shutting down: no last chunk
        self._task: asyncio.Task[None] | None = None

    async def send(self, message: Message, *, last: bool = False) -> None:
        async with self._lock:
            await self._start()
            if last:
                self.active = False
            await self._send(message)

    async def answer(self, transport: StreamableHTTPServerTransport, event: EventMessage) -> None:
        """The call's answer. Nothing sent before it (no notification, no question, no head yet): one JSON
        response, as the SDK's JSON-response mode writes it (``_create_json_response``: its head, the same
        JSON as the event's data), which the client's Accept allows; else the stream's last event and its
        empty last chunk in one body message (one system call, the held head joined, where the SDK's stream
        makes three)."""
        async with self._lock:
            self.active = False
            if self.started or _cancelled(event):
                # a call the client cancelled: it is likely closing, and the SDK's client reads a late JSON
                # answer into its closed session and raises from its exit (its event-stream reader does not)
                await self._start()
                body = ensure_bytes(transport._create_event_data(event), SEP)
                await self._send({"type": "http.response.body", "body": body, "more_body": False})
                return
            self.started = True
            status, headers, body = json_answer(transport, event.message)
            holder = self._holder
            if holder is not None:
                holder.body_follows = True  # the body is sent right after the head: no turn booked
            try:
                await self._send({"type": "http.response.start", "status": status, "headers": headers})
                await self._send({"type": "http.response.body", "body": body})
            finally:
                if holder is not None:
                    holder.body_follows = False

    async def _start(self) -> None:
        if not self.started:
            self.started = True
            await self._send({"type": "http.response.start", "status": 200, "headers": self._head})

    def watch(self, receive: Receive) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch(receive))

    def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _watch(self, receive: Receive) -> None:
        async with self._lock:
            await self._start()  # a long call's head goes out now, as the SDK's at once
        async with anyio.create_task_group() as tg:
            for job in (partial(self._disconnect, receive), self._shutdown, self._ping):
                tg.start_soon(self._ending, job, tg)

    async def _ending(self, job: Callable[[], Any], tg: anyio.abc.TaskGroup) -> None:
        if await job():
            self.aborted = True
            self._reader.close()  # wakes the stream's wait: it ends without the last chunk
        tg.cancel_scope.cancel()

    async def _disconnect(self, receive: Receive) -> bool:
        while self.active:
            if (await receive())["type"] == "http.disconnect":
                return True
        return False

    async def _shutdown(self) -> bool:
        await EventSourceResponse._listen_for_exit_signal()
        return True

    async def _ping(self) -> bool:
        await anyio.sleep(max(0.0, PING_SECONDS - WATCH_AFTER))
        while self.active:
            comment = ServerSentEvent(comment=f"ping - {_utc_now()}", sep=SEP)
            async with self._lock:
                if self.active:
                    await self._send({"type": "http.response.body", "body": ensure_bytes(comment, SEP),
                                      "more_body": True})
            await anyio.sleep(PING_SECONDS)
        return False


def _utc_now() -> Any:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc)
