"""Sentinel's own stdio transport: answers every malformed line itself, and never blocks a shutdown.

The SDK's reader hands a line it cannot parse to the session, which drops it without an answer, and
it reads stdin in a worker thread that a signal cannot interrupt (``serve`` then ignored SIGTERM while
stdin stayed open). Here stdin is read by the event loop itself (non-blocking pipe), each line meets
``wire_limits`` first, and a bad one gets its JSON-RPC error on stdout at once. Like the SDK, fds 0 and 1
are pointed away from the wire while serving (at /dev/null and stderr), so stray prints and children
cannot corrupt it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from typing import Any, AsyncIterator, Callable

import anyio
import mcp_types as types
from mcp.shared._context_streams import ContextReceiveStream, ContextSendStream, create_context_streams
from mcp.shared.message import ServerMessageMetadata, SessionMessage

from sentinel_mcp.core.wire_limits import INVALID_REQUEST, MAX_MESSAGE_BYTES, WireError, parse_message
from sentinel_mcp.gateway.in_flight_requests import InFlightRequests, refusal
from sentinel_mcp.gateway.stdio_lean_calls import StdioLeanCalls
from sentinel_mcp.gateway.stdio_wire_out import WireOut, pollable
from sentinel_mcp.gateway.wire_guard import sdk_accepts

log = logging.getLogger(__name__)
CHUNK = 64 * 1024


def _claim(fd: int, replacement: int) -> int:
    """A private duplicate of ``fd`` (the wire); ``fd`` itself now points at ``replacement``."""
    private = os.dup(fd)
    os.set_inheritable(private, False)
    os.dup2(replacement, fd)
    return private


class _Lines:
    """Newline-framed messages from a byte stream, oversized ones reported instead of buffered."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.skipping = False

    def feed(self, data: bytes) -> list[bytes | WireError]:
        out: list[bytes | WireError] = []
        self.buf += data
        while True:
            nl = self.buf.find(b"\n")
            if nl < 0:
                if len(self.buf) > MAX_MESSAGE_BYTES and not self.skipping:
                    self.skipping = True
                    out.append(WireError(INVALID_REQUEST,
                                         f"Invalid Request: message larger than {MAX_MESSAGE_BYTES} bytes"))
                if self.skipping:
                    self.buf.clear()
                return out
            line = bytes(self.buf[:nl])
            del self.buf[:nl + 1]
            if self.skipping:
                self.skipping = False
                continue
            if line.strip():
                out.append(line)


class _Encoded:
    """A line already encoded, handed to the writer in turn with the SDK's messages (``rid``: the id it
    answers, if it is an answer)."""

    __slots__ = ("line", "rid")

    def __init__(self, line: str, rid: Any = None) -> None:
        self.line = line
        self.rid = rid


class _CountedSendStream(ContextSendStream[SessionMessage]):
    """The write stream the SDK is given, counting what is handed through it to the writer (``stdout_loop``):
    while everything handed has been written, an answer that must come after it may be written at once
    instead of behind it (three turns of the event loop fewer per handshake-era answer; issue 21). Counted
    before the hand-over, so a message on its way is never taken for written."""

    __slots__ = ("_tally", "closed")

    def __init__(self, inner: Any, tally: list[int] | None = None) -> None:
        super().__init__(inner)
        self._tally = tally if tally is not None else [0]  # shared with clones: one count per channel
        self.closed = False

    @property
    def handed(self) -> int:
        return self._tally[0]

    async def send(self, item: SessionMessage) -> None:
        self._tally[0] += 1
        await super().send(item)

    def clone(self) -> "_CountedSendStream":
        return _CountedSendStream(self._inner.clone(), self._tally)

    def close(self) -> None:
        self.closed = True
        super().close()

    async def aclose(self) -> None:
        self.closed = True
        await super().aclose()


class _FrontTake:
    """The client's lone line, served as the pipe gives it when it is the common call
    (``StdioLeanCalls.take``) and nothing could come before it: the stdin loop asleep at its read (the reader
    has a waiter: not handing a message to the SDK, not waiting for room to write), nothing unread (the
    reader's buffer, a part of a line in the frames), exactly one complete line. The same checks as the
    loop's, in its order (parsed, an id in flight refused, the SDK's parser sure to accept it); anything else
    is left to the loop, which reads it as before. Saves the stdin loop's task a turn, and its reads, per call
    (issue 21)."""

    __slots__ = ("reader", "frames", "lean", "in_flight", "out")

    def __init__(self, reader: asyncio.StreamReader, frames: "_Lines", lean: StdioLeanCalls,
                 in_flight: InFlightRequests, out: WireOut) -> None:
        self.reader, self.frames, self.lean, self.in_flight, self.out = reader, frames, lean, in_flight, out

    def at_once(self, data: bytes) -> bool:
        reader, frames = self.reader, self.frames
        if (reader._waiter is None or reader._buffer or frames.buf or frames.skipping  # type: ignore[attr-defined]
                or len(data) > CHUNK or data.find(b"\n") != len(data) - 1 or self.out.over()):
            return False
        item = data[:-1]
        try:
            message = parse_message(item)
            if (self.in_flight.repeats(message) or not sdk_accepts(message, item)
                    or not self.lean.take(message)):
                return False
        except Exception:  # noqa: BLE001 - the loop reads it again, and answers what is wrong with it
            return False
        self.in_flight.handed_on(message)  # freed by the lean call (``answered``)
        return True


def _take_at_once(reader: asyncio.StreamReader, take: _FrontTake) -> None:
    feed = reader.feed_data

    def fed(data: bytes) -> None:
        if not take.at_once(data):
            feed(data)

    reader.feed_data = fed  # type: ignore[method-assign, assignment]


async def _reader(fd: int, tap: Callable[[asyncio.StreamReader], None] | None = None) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    if pollable(fd):
        reader = asyncio.StreamReader(limit=CHUNK * 4)
        if tap is not None:
            tap(reader)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0, closefd=False))
        try:
            while chunk := await reader.read(CHUNK):
                yield chunk
        finally:
            transport.close()
    else:  # a regular file or /dev/null: reads never block for long
        while chunk := await anyio.to_thread.run_sync(os.read, fd, CHUNK):
            yield chunk


def _freeing(in_flight: InFlightRequests, rid: Any) -> Any:
    async def free() -> None:
        in_flight.answered(rid)

    return free


def _line_of(message: types.JSONRPCMessage) -> str:
    """A message as one line. A text that JSON cannot carry as UTF-8 (a lone surrogate a hostile argument or
    result put in an answer) is written with it replaced (``send_line``), never ending the writer: the
    gateway would otherwise stop answering for good."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True)
    except ValueError:  # pydantic's serialization error
        log.warning("stdio: an answer had text not writable as UTF-8; it is sent with that text replaced")
        plain = message.model_dump(by_alias=True, exclude_unset=True, mode="json")
        return json.dumps(plain, ensure_ascii=False)


@contextlib.asynccontextmanager
async def stdio_transport(stdin_fd: int = 0, stdout_fd: int = 1,  # type: ignore[no-untyped-def]
                          lean: StdioLeanCalls | None = None):
    """Yields ``(read_stream, write_stream)`` for ``Server.run``, like the SDK's ``stdio_server``. ``lean``:
    offered each parsed message first; it serves the common modern ``tools/call`` itself."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    wire_in = _claim(stdin_fd, devnull)
    os.close(devnull)
    wire_out = _claim(stdout_fd, 2)
    # never blocks the loop on a client that does not read; says when too many lines wait (stdio_wire_out)
    out = WireOut(wire_out)
    send_line = out.write

    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    raw_send, raw_receive = anyio.create_memory_object_stream[Any](0)
    write_stream = _CountedSendStream(raw_send)
    write_reader: ContextReceiveStream[SessionMessage] = ContextReceiveStream(raw_receive)
    written = 0  # what stdout_loop has written of what was handed to it (``write_stream.handed``)
    # the requests handed on and not yet answered: one repeating an id among them is refused (a repeated id
    # overwrote the dispatcher's entry of the call in flight and both answers went out under one id)
    in_flight = InFlightRequests()
    writing = True  # stdout_loop still takes what is handed
    out.queued = lambda: write_stream.handed - written

    async def stdin_loop() -> None:
        frames = _Lines()

        def tap(reader: asyncio.StreamReader) -> None:
            if lean is not None:
                _take_at_once(reader, _FrontTake(reader, frames, lean, in_flight, out))

        async with read_writer:
            async for chunk in _reader(wire_in, tap):
                for item in frames.feed(chunk):
                    if out.over():  # the client does not read its answers: it is sent no more until it does
                        await out.room()
                    if isinstance(item, WireError):
                        await send_line(json.dumps(item.response()))
                        continue
                    try:
                        message = parse_message(item)
                        if in_flight.repeats(message):
                            await send_line(json.dumps(refusal(message)))
                            continue
                        # what HTTP's front accepts (``wire_guard``): the SDK's own parse, stricter (an
                        # escaped lone surrogate is refused), asked when its answer is not already known
                        sure = sdk_accepts(message, item)
                        if sure and lean is not None and lean.take(message):
                            in_flight.handed_on(message)  # freed by the lean call (``answered``)
                            continue  # the common call, served without the SDK's dispatcher
                        if not sure:
                            types.jsonrpc_message_adapter.validate_json(item, by_name=False)
                        parsed = types.jsonrpc_message_adapter.validate_python(message, by_name=False)
                    except WireError as e:
                        await send_line(json.dumps(e.response()))
                        continue
                    except ValueError as e:  # a JSON-RPC object the protocol types refuse
                        mid = message.get("id") if isinstance(message, dict) else None
                        if "method" in message and mid is not None:
                            await send_line(json.dumps({"jsonrpc": "2.0", "id": mid, "error": {
                                "code": INVALID_REQUEST, "message": f"Invalid Request: {str(e)[:300]}"}}))
                        else:
                            log.info("stdio: dropped an invalid notification or response: %s", str(e)[:200])
                        continue
                    if lean is not None:
                        lean.seen(message)
                    if "method" in message and "id" in message:
                        in_flight.handed_on(message)
                        # a request the dispatcher settles unanswered (cancelled) frees its id then
                        await read_writer.send(SessionMessage(parsed, metadata=ServerMessageMetadata(
                            on_request_unanswered=_freeing(in_flight, message["id"]))))
                        continue
                    await read_writer.send(SessionMessage(parsed))

    async def stdout_loop() -> None:
        nonlocal written, writing
        try:
            async with write_reader:
                async for item in write_reader:
                    if type(item) is _Encoded:
                        if item.rid is not None:
                            in_flight.answered(item.rid)
                        await send_line(item.line)
                    else:
                        message = item.message
                        if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
                            in_flight.answered(message.id)
                        await send_line(_line_of(message))
                    written += 1
                    out.moved()
        finally:
            writing = False

    async def ordered(line: str, rid: Any = None) -> None:
        """``line`` written behind what the SDK's writer was handed before it (the lean calls' answers on
        a handshake-era connection): at once when all of that is written already; dropped once the SDK closed
        its stream, as the dispatcher drops one. ``rid``: the id the line answers."""
        if writing and not write_stream.closed and write_stream.handed == written:
            if rid is not None:
                in_flight.answered(rid)
            await send_line(line)
            return
        try:
            await write_stream.send(_Encoded(line, rid))  # type: ignore[arg-type]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            log.debug("stdio: dropped an answer: the write stream is closed")

    try:
        async with anyio.create_task_group() as tg:
            if lean is not None:
                lean.bind(send_line, _line_of, ordered, in_flight.answered)
            tg.start_soon(stdin_loop)
            tg.start_soon(stdout_loop)
            try:
                yield read_stream, write_stream
            finally:
                if lean is not None:
                    with anyio.CancelScope(shield=True):
                        await lean.close()
                tg.cancel_scope.cancel()
    finally:
        out.close()
        with contextlib.suppress(OSError):
            os.set_blocking(wire_in, True)  # shared with whoever else holds this pipe or terminal
        for fd, private in ((stdin_fd, wire_in), (stdout_fd, wire_out)):
            with contextlib.suppress(OSError):
                os.dup2(private, fd)
                os.close(private)
