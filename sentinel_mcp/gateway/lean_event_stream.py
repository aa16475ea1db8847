"""An upstream's answer read off the wire, bounded: a plain answer whole (at most ``limit`` bytes, declared
or not), or an event stream's events one by one (the SSE spec's fields and line ends; an event, and a line,
never buffered past ``limit``). The upstream is hostile: what passes a bound is an ``MCPError`` the caller
turns into a clear error (``lean_upstream.py``)."""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass
from typing import AsyncGenerator

from mcp.shared.exceptions import MCPError

from sentinel_mcp.gateway.lean_http import HttpAnswer

INVALID_REQUEST = -32600
MAX_EVENT_BYTES = 1024 * 1024  # one event of an event-stream answer (the SDK's own limit)


async def read_bounded(response: HttpAnswer, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise MCPError(INVALID_REQUEST, f"answer larger than {limit} bytes ({declared} declared)")
    whole = response.whole()  # all of it came with the head: the same bytes and bound, no reader made
    if whole is not None:
        if len(whole) > limit:
            raise MCPError(INVALID_REQUEST, f"answer larger than {limit} bytes")
        return whole
    chunks: list[bytes] = []
    size = 0
    async with aclosing(response.body()) as body:
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise MCPError(INVALID_REQUEST, f"answer larger than {limit} bytes")
            chunks.append(chunk)
    return b"".join(chunks)


@dataclass
class Event:
    """One server-sent event: its type, data, and the id and reconnection delay it set (if any)."""

    kind: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None


async def stream_events(response: HttpAnswer, limit: int = MAX_EVENT_BYTES) -> AsyncGenerator[Event, None]:
    """Each event of an event stream (lines end in LF, CRLF or CR; fields as the SSE spec reads them), one
    event at most ``limit`` bytes (``MAX_EVENT_BYTES``, or the server's smaller ``max_result_bytes``), a line
    never buffered past that either."""
    pending = b""
    event, size, seen = Event(), 0, False
    data: list[str] = []
    async with aclosing(response.body()) as body:
        async for chunk in body:
            pending += chunk
            while True:
                cut = line_end(pending)
                if cut is None:
                    if len(pending) > limit:
                        raise MCPError(INVALID_REQUEST, f"event larger than {limit} bytes")
                    break
                end, skip = cut
                line = pending[:end].decode("utf-8", "replace")
                pending = pending[end + skip:]
                if not line:  # the end of an event
                    if seen:
                        event.data = "\n".join(data)
                        yield event
                    event, data, size, seen = Event(), [], 0, False
                    continue
                if line.startswith(":"):
                    continue  # a comment (a keep-alive)
                field, _, value = line.partition(":")
                value = value.removeprefix(" ")
                seen = True
                if field == "data":
                    size += len(value) + 1
                    if size > limit:
                        raise MCPError(INVALID_REQUEST, f"event larger than {limit} bytes")
                    data.append(value)
                elif field == "event":
                    event.kind = value or "message"
                elif field == "id" and "\0" not in value:
                    event.id = value[:200]
                elif field == "retry" and value.isascii() and value.isdigit():
                    event.retry = int(value[:9])


def line_end(buf: bytes) -> tuple[int, int] | None:
    """Where the first line of ``buf`` ends and how long its terminator is; None when none is complete (a
    CR at the very end may yet be followed by its LF)."""
    lf, cr = buf.find(b"\n"), buf.find(b"\r")
    if cr < 0 or (0 <= lf < cr):
        return (lf, 1) if lf >= 0 else None
    if cr + 1 == len(buf):
        return None
    return (cr, 2) if buf[cr + 1:cr + 2] == b"\n" else (cr, 1)
