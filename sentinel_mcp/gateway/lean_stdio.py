"""The lean upstream calls over stdio: a ``tools/call`` written to the process's stdin as one line, its answer
taken off the process's stdout by id, beside the SDK's own session on the same pipes.

The SDK's client sends each request through its session's dispatcher (a memory stream to a writer task, a
pending-request entry, a receive loop, per-request scopes) and validates the answer twice over pydantic;
that cost the gateway about 1 ms of CPU per forwarded call, about as much as a small upstream spends on it.
Here the SDK keeps the process and everything else on its pipes: the process it spawns is handed to it
wrapped (``TappedProcess``, made in ``process_groups``' spawn hook), whose stdin is shared under a lock
(lines are never interleaved) and whose stdout is read through a tap. The tap is driven by the SDK's own
reader task: each line is passed on to the SDK unchanged, except the answers to lean calls (a response, no
``method``, to one of the ids waiting here; the ids live far above the SDK's own), the progress under their
tokens, and log lines while they wait (routed as the SDK's logging callback routes them, and in order, before
the answer that follows them). So the upstream's requests and other notifications still reach the SDK
session, which answers and routes them as before (a handshake-era stdio upstream's calls take turns by
client: what it pushes names no call; ``party_turns.py``). Input rounds and every other method take the SDK.

The upstream is hostile: an answer is held to its id's type, it must be a JSON-RPC 2.0 object with a result
object or a well-formed error, and is validated as the SDK validates it (``LeanCaller``'s shared checks); a
line that is not JSON reaches the SDK as before (which fails the waiting calls at once); a process that ends
fails every waiting lean call with the SDK's "connection closed", so the upstream reconnects. A line
longer than ``MAX_LINE_BYTES`` (the SDK's reader would hold all of it) ends the connection the same way, with
that reason.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult, LoggingMessageNotificationParams

from sentinel_mcp.config import StdioServer
from sentinel_mcp.core.json_text import compact_encoder
from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.gateway import stdout_feed
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.lean_upstream import (
    CONNECTION_CLOSED,
    HANDSHAKE_IDS,
    PARSE_ERROR,
    MAX_ANSWER_BYTES,
    LogSink,
    ProgressSink,
    live_session,
    progress_to,
    response_for,
    validated_result,
)
from sentinel_mcp.gateway.paced_reading import progress_of
from sentinel_mcp.gateway.plain_upstream_result import holds_lone_surrogate, surrogate_free

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
# one line of the upstream's stdout (a message) at most: the bound of a lean HTTP answer. The SDK's reader
# keeps whatever comes before a newline, so a line past it ends the connection (the upstream is reconnected)
MAX_LINE_BYTES = MAX_ANSWER_BYTES
# a lean call's line, as ``json.dumps(..., separators=(",", ":"), ensure_ascii=False)`` writes it, its encoder
# built once (``core/json_text.py``)
_LINE = compact_encoder(ensure_ascii=False)


def _text(line: bytes) -> str:
    """A line as the SDK's reader decodes it (UTF-8, a byte that is not UTF-8 read as U+FFFD: its
    ``encoding_error_handler``, upstream_client.py), so both paths read one message alike."""
    return line.decode("utf-8", "replace")


class _Waiting:
    __slots__ = ("answer", "on_progress", "on_log")

    def __init__(
        self, answer: asyncio.Future[dict[str, Any]], on_progress: ProgressSink, on_log: LogSink
    ) -> None:
        self.answer = answer
        self.on_progress = on_progress
        self.on_log = on_log


class _SharedStdin(ByteSendStream):
    """The process's stdin for the SDK's writer and the lean calls: one line at a time."""

    def __init__(self, inner: ByteSendStream) -> None:
        self.inner = inner
        # an uncontended acquire does not yield to the loop (an extra turn per call; issue 21)
        self.lock = anyio.Lock(fast_acquire=True)
        # anyio's wrapper ends every send with a checkpoint (another turn); a lean line is written to the
        # asyncio writer underneath when there is one (a whole line per write: never interleaved)
        writer = getattr(inner, "_stream", None)
        self._writer = writer if isinstance(writer, asyncio.StreamWriter) else None

    async def send(self, item: bytes) -> None:
        async with self.lock:
            await self.inner.send(item)

    async def send_line(self, item: bytes) -> None:
        """One whole line of a lean call; ``OSError`` (``BrokenPipeError``...) when the pipe is gone."""
        writer = self._writer
        if writer is None:
            return await self.send(item)
        lock = self.lock
        if not lock.locked():
            # nobody is part-way through a line: the line handed to the transport at once (whole: lines never
            # interleave), and ``drain`` skipped when it has nothing to wait for (the line is all in the pipe
            # and the transport still open: it would return at once). The lock is taken only to wait in
            # ``drain`` (until then nothing else runs); anyio's acquire and release each ask for the current
            # task, a getpid on 3.11 (issue 21)
            if writer.is_closing():
                raise anyio.BrokenResourceError("the process's stdin is closed")
            writer.write(item)
            if writer.transport.get_write_buffer_size() or writer.is_closing():
                lock.acquire_nowait()  # free: nothing ran since it was seen free
                try:
                    await writer.drain()
                finally:
                    lock.release()
            return
        async with lock:
            if writer.is_closing():
                raise anyio.BrokenResourceError("the process's stdin is closed")
            writer.write(item)
            await writer.drain()

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def extra_attributes(self) -> Any:
        return self.inner.extra_attributes


class _TappedStdout(ByteReceiveStream):
    """The process's stdout as the SDK reads it, without the lines that answer lean calls."""

    def __init__(self, inner: ByteReceiveStream, tap: "StdioTap", max_line: int = MAX_LINE_BYTES) -> None:
        self.inner = inner
        self.tap = tap
        # the server's ``max_result_bytes``: a line past it is refused before any of it is parsed (parsing
        # holds the event loop: ~0.9 s at 16 MiB)
        self.max_line = max_line
        # the start of a line held back while lean calls wait, in the pieces it came in: joined once, at the
        # line's end (joined at each piece, a 16 MiB answer was copied some 4 GiB over, ~2.5 s of the loop)
        self.pending: list[bytes] = []
        self.midline = False  # the SDK was given the start of a line whose end has not come yet
        self.line_bytes = 0  # bytes since the last newline
        self.overlong: str | None = None
        # the asyncio reader under anyio's wrapper, when there is one: a lean call's answer arriving alone is
        # taken as it is read from the pipe (``at_once``), not by the SDK's reader task woken for it, which
        # would read it through here only to find nothing for the SDK (a task's turn and four layers of
        # reads a call; issue 21)
        stream = getattr(inner, "_stream", None)
        self._stream = stream if isinstance(stream, asyncio.StreamReader) else None
        if self._stream is not None:
            feed = self._stream.feed_data

            def fed(data: bytes) -> None:
                if not self.at_once(data):
                    feed(data)

            self._stream.feed_data = fed  # type: ignore[method-assign, assignment]

    def at_once(self, data: bytes) -> bool:
        """Whether ``data``, as the pipe gave it, was taken here whole: exactly one complete line, at a line's
        start, with nothing unread before it (the asyncio reader's buffer empty, nothing held back) and the
        SDK's reader task asleep at its read (else it is still handing on lines read before: a notice the
        upstream wrote before this answer would reach its handler after the call had its answer), that
        answers a waiting lean call (``StdioTap.answer``). Anything else (several lines, a part of one, a
        log line or a progress notice, whose callbacks are awaited, what the SDK reads) goes the way of
        ``receive``, in order."""
        stream = self._stream
        if (not self.tap.waiting or self.pending or self.midline or self.overlong is not None
                or stream is None or stream._waiter is None  # type: ignore[attr-defined]
                or stream._buffer or stream.at_eof()  # type: ignore[attr-defined]
                or len(data) > CHUNK or len(data) > self.max_line or data.find(b"\n") != len(data) - 1):
            return False
        if not self.tap.answer(data):
            return False
        self.tap.heard += 1
        return True

    async def receive(self, max_bytes: int = CHUNK) -> bytes:
        budget = self.tap.budget
        if budget is not None and budget.pause_until:  # it sent too many notices to nobody (notice_budget.py)
            await budget.paced()
        while True:
            if self.overlong is not None:
                raise anyio.BrokenResourceError(self.overlong)
            try:
                chunk = await self.inner.receive(max_bytes)
            except BaseException as e:
                if not isinstance(e, (asyncio.CancelledError, GeneratorExit)):
                    self.tap.ended(type(e).__name__)
                raise
            self.tap.heard += 1
            newline = chunk.rfind(b"\n")
            self.line_bytes = len(chunk) - newline - 1 if newline >= 0 else self.line_bytes + len(chunk)
            if self.line_bytes > self.max_line:
                said = ' (its "max_result_bytes")' if self.max_line != MAX_LINE_BYTES else ""
                self.overlong = f"the upstream wrote a line of more than {self.max_line} bytes{said}"
                self.pending = []
                self.tap.ended(self.overlong)
                raise anyio.BrokenResourceError(self.overlong)
            if not self.tap.waiting and not self.pending:
                self.midline = not chunk.endswith(b"\n")
                return chunk  # no lean call in flight: the bytes go through as they came
            if not self.midline and newline < 0:
                self.pending.append(chunk)  # still within the held line
                continue
            data = b"".join((*self.pending, chunk)) if self.pending else chunk
            head = b""
            if self.midline:  # the rest of a line the SDK has the start of: its own
                cut = data.find(b"\n") + 1
                if not cut:
                    return data
                head, data, self.midline = data[:cut], data[cut:], False
            cut = data.rfind(b"\n") + 1
            self.pending = [data[cut:]] if cut < len(data) else []
            passed = head + (await self.tap.sift(data[:cut]) if cut else b"")
            if passed:
                return passed

    async def aclose(self) -> None:
        self.tap.ended("closed")
        await self.inner.aclose()

    @property
    def extra_attributes(self) -> Any:
        return self.inner.extra_attributes


class TappedProcess(Process):
    """The SDK's view of an stdio upstream's process: the same process, its pipes shared with lean calls."""

    def __init__(self, inner: Process, max_line: int | None = None) -> None:
        self.inner = inner
        self.tap = StdioTap()
        assert inner.stdin is not None and inner.stdout is not None  # spawned with pipes
        self._stdin = _SharedStdin(inner.stdin)
        self._stdout = _TappedStdout(inner.stdout, self.tap, MAX_LINE_BYTES if max_line is None else max_line)
        self.tap.stdin = self._stdin
        # its reads reach the tap as the pipe gives them, not a turn of the loop later (``stdout_feed.py``)
        stdout_feed.feed_stdout_at_once(inner)

    def __getattr__(self, name: str) -> Any:  # what else the SDK reads of its process (its transport)
        return getattr(self.inner, name)

    async def wait(self) -> int:
        return await self.inner.wait()

    def terminate(self) -> None:
        self.inner.terminate()

    def kill(self) -> None:
        self.inner.kill()

    def send_signal(self, signal: Any) -> None:
        self.inner.send_signal(signal)

    @property
    def pid(self) -> int:
        return self.inner.pid

    @property
    def returncode(self) -> int | None:
        return self.inner.returncode

    @property
    def stdin(self) -> ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream | None:
        return self.inner.stderr

    async def aclose(self) -> None:
        self.tap.ended("closed")
        await self.inner.aclose()


class StdioTap:
    """The lean calls waiting on one process: their ids, and how their answers are taken off its stdout."""

    def __init__(self) -> None:
        self.waiting: dict[int, _Waiting] = {}
        self.stdin: _SharedStdin | None = None
        self.gone: str | None = None  # the process's stdout ended: why
        self.budget: NoticeBudget | None = None  # its upstream's notices to nobody (pauses the reading)
        # reads off its stdout so far: the process is alive and writing (``Upstream._pinged``)
        self.heard = 0

    async def sift(self, lines: bytes) -> bytes:
        """Complete lines from stdout: the answers, progress and log lines of waiting lean calls are taken
        (in order: a call's log lines reach its caller before its result, as on the SDK's own path), the rest
        is returned for the SDK, unchanged."""
        kept: list[bytes] = []
        for line in lines.split(b"\n")[:-1]:
            if not await self._take(line):
                kept.append(line + b"\n")
        return b"".join(kept)

    async def _take(self, line: bytes) -> bool:
        if b'"id"' not in line and b"progressToken" not in line and b"notifications/message" not in line:
            return False  # cannot be ours: not worth parsing
        try:
            msg = json.loads(_text(line))
        except (ValueError, RecursionError):
            return False  # the SDK reports it (and fails the waiting calls)
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return False
        if msg.get("method") == "notifications/message" and "id" not in msg and self.waiting:
            try:
                line_params = LoggingMessageNotificationParams.model_validate(msg.get("params"))
            except ValueError:
                return False  # the SDK's session drops it, as before
            # routed as the SDK's logging callback routes it (the one call in flight)
            await next(iter(self.waiting.values())).on_log(line_params)
            return True
        if "method" in msg:
            if msg.get("method") == "notifications/progress" and "id" not in msg:
                params = msg.get("params")
                if not isinstance(params, dict):
                    return False
                token, report = progress_of(params)
                # any other (no report, no call of ours) goes on to the SDK's session, charged there
                waiting = self.waiting.get(token) if type(token) is int and report else None
                if waiting is not None:
                    await progress_to(params, waiting.on_progress)
                    return True
            return False
        return self._answered(msg, line)

    def answer(self, line: bytes) -> bool:
        """Whether ``line`` (one whole line) answers a waiting lean call, which then has it; as ``_take``
        tells it (not a request or notification, a JSON-RPC message with the id of a waiting call)."""
        if b'"id"' not in line:
            return False
        try:
            msg = json.loads(_text(line))
        except (ValueError, RecursionError):
            return False
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or "method" in msg:
            return False
        return self._answered(msg, line)

    def _answered(self, msg: dict[str, Any], line: bytes) -> bool:
        rid = msg.get("id")
        waiting = self.waiting.get(rid) if type(rid) is int else None
        if waiting is None:
            return False
        if not waiting.answer.done():
            # the SDK's reader takes no lone surrogate (escaped, or its encoded bytes); ``json.loads`` takes
            # both: refused here as the SDK refuses it, and as the lean HTTP path does (lean_upstream._parse);
            # so every text of an answer passed on encodes as UTF-8 (``StdioCaller.call_tool`` relies on it)
            if not surrogate_free(line) and holds_lone_surrogate(msg):
                waiting.answer.set_exception(
                    MCPError(PARSE_ERROR, "Failed to parse JSON response: a lone surrogate in a text"))
            else:
                waiting.answer.set_result(msg)
        return True

    def ended(self, why: str) -> None:
        if self.gone is None:
            self.gone = why
        for waiting in self.waiting.values():
            if not waiting.answer.done():
                waiting.answer.set_exception(MCPError(CONNECTION_CLOSED, f"Connection closed ({why})"))


def stdio_caller(target: Any) -> bool:
    """Whether ``target``'s process gets the lean calls (a configured stdio server, the switch not off)."""
    return isinstance(target, StdioServer) and os.environ.get("SENTINEL_LEAN_UPSTREAM", "on") != "off"


class StdioCaller:
    """One stdio upstream's lean ``tools/call`` path; lives as long as its SDK connection."""

    own_stream = False  # what the upstream pushes mid-call names no call: its calls take turns by client

    def __init__(self, tap: StdioTap, client: Client) -> None:
        self.tap = tap
        self.client = client
        self.era = client.protocol_version or ""
        self._next_id = HANDSHAKE_IDS  # far above the SDK's own ids on the same pipe
        self._cancels: set[asyncio.Task[None]] = set()

    def usable(self, client: Client | None) -> bool:
        return client is self.client and client.protocol_version == self.era and self.tap.gone is None

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        meta: dict[str, Any] | None,
        on_log: LogSink,
        on_progress: ProgressSink,
        on_notice: Any,
    ) -> CallToolResult | InputRequiredResult:
        """``on_notice`` is unused: notifications other than progress and log lines reach the SDK's
        session."""
        self._next_id += 1
        rid = self._next_id
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if meta:
            params["_meta"] = dict(meta)
        data: dict[str, Any] = {"method": "tools/call", "params": params}
        live_session(self.client)._stamp(data, {})  # the era's envelope (2026-07-28)
        params.setdefault("_meta", {})["progressToken"] = rid
        line = _LINE({"jsonrpc": "2.0", "id": rid, **data})
        answer: asyncio.Future[dict[str, Any]] = running_loop().create_future()
        self.tap.waiting[rid] = _Waiting(answer, on_progress, on_log)
        answered = False
        try:
            await self._send(line)
            msg = await answer
            answered = True
        finally:
            del self.tap.waiting[rid]
            if not answered and self.tap.gone is None:
                self._cancel_later(rid)
        raw = response_for(msg, rid)
        # every text of an answer the tap passed on is writable as UTF-8 (``StdioTap._answered``: its bytes
        # ``surrogate_free``, or walked by ``holds_lone_surrogate``, the same ``encode`` question): the model
        # is read without walking them again; the shape bounds first (``bound``), in the read's own pass
        return validated_result(self.client, self.era, raw, utf8_texts=True, bound=True)

    async def _send(self, line: str) -> None:
        if self.tap.gone is not None or self.tap.stdin is None:
            raise MCPError(CONNECTION_CLOSED, f"Connection closed ({self.tap.gone or 'no pipe'})")
        try:
            await self.tap.stdin.send_line((line + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError) as e:
            raise MCPError(CONNECTION_CLOSED, f"Connection closed: {type(e).__name__}") from None

    def _cancel_later(self, rid: int) -> None:
        """The courtesy cancel both eras send on a stream transport, beside whatever ended the call."""
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "caller cancelled"}}
        task = asyncio.get_running_loop().create_task(self._send_quietly(json.dumps(note)))
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)

    async def _send_quietly(self, line: str) -> None:
        try:
            with anyio.fail_after(5):
                await self._send(line)
        except (MCPError, TimeoutError) as e:
            log.info("lean stdio call: courtesy cancel not delivered: %s", e)
