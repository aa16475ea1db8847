"""What an HTTP upstream's answers may be on the SDK client's path (initialize, listings, resources, prompts,
pushed questions; the lean calls bound their own in ``lean_upstream.py``).

The SDK reads a JSON answer whole (``response.aread()``) and httpx decodes a compressed body as it goes, so
a hostile upstream's ``tools/list`` answered with 400 MB of JSON, or a gzip body of 2 MB that inflates to
2 GB, took gigabytes of the gateway's memory before any listing bound could look at it. Here each response's
body is bounded before anything buffers it: a ``Content-Encoding`` other than ``identity`` is refused (it is
asked for by ``Accept-Encoding: identity``), and a body other than an event stream ends past
``MAX_BODY_BYTES`` (the lean calls' answer limit). An event stream is bounded per event by the SDK (1 MiB)
and here by the server's own limit (``max_result_bytes``, which may be smaller): on the old SSE transport
every answer is an event of one stream, so that bound held nowhere else. An event is counted on the raw bytes
from the blank line before it (``EVENT_SLACK`` more, for its field names and line ends); with no compression
its events are as large as the bytes that carried them.
A refused body raises ``BodyRefused`` (an ``httpx2.StreamError``): the SDK answers that request with an error
(a listing then fails and is retried with back-off) and the connection goes on.
"""

from __future__ import annotations

from typing import AsyncIterator, Awaitable, Callable

import httpx2

from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.gateway.lean_upstream import MAX_ANSWER_BYTES

MAX_BODY_BYTES = MAX_ANSWER_BYTES
EVENT_SLACK = 1024  # an event's raw bytes beyond its data: "event: message", "data: " per line, line ends
# where an event ends: an empty line, i.e. two line ends in a row (LF, CR or CRLF; CR LF alone is one)
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r")
REQUEST_HEADERS = {"Accept-Encoding": "identity"}


class BodyRefused(httpx2.StreamError, GatewayError):
    """An upstream's response body past a bound, or compressed (a stream error for the SDK's client, which
    answers the request with an error; Sentinel's own for everything else)."""


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int, refusal: str | None, events: bool) -> None:
        self.inner, self.limit, self.refusal, self.events = inner, limit, refusal, events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.refusal is not None:
            raise BodyRefused(self.refusal)
        size, tail = 0, b""
        async for chunk in self.inner:
            if self.events:  # bytes since the last event's end (found across a chunk's edge too)
                seen = tail + chunk
                end = max(seen.rfind(mark) for mark in _EVENT_ENDS)
                size = len(seen) - end - 2 if end >= 0 else size + len(chunk)
                tail = chunk[-1:]
                if size > self.limit + EVENT_SLACK:
                    raise BodyRefused(f"an event the upstream sent is larger than {self.limit:,} bytes")
            else:
                size += len(chunk)
                if size > self.limit:
                    raise BodyRefused(f"the upstream's answer is larger than {self.limit:,} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def body_bounds(limit: int = MAX_BODY_BYTES) -> Callable[[httpx2.Response], Awaitable[None]]:
    """``bound_body`` with the server's own limit (``max_result_bytes``: ``lean_upstream.answer_limit``)."""

    async def hook(response: httpx2.Response) -> None:
        await bound_body(response, limit)

    return hook


async def bound_body(response: httpx2.Response, limit: int = MAX_BODY_BYTES) -> None:
    """A response hook: the body of ``response`` read within the bounds above (a hook sees every response,
    whichever transport or proxy carried it, before its body is read)."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    refusal = None
    if encoding not in ("", "identity"):
        refusal = f"the upstream's answer is compressed ({encoding[:40]!r}); Sentinel reads only identity"
    event_stream = response.headers.get("content-type", "").lower().startswith("text/event-stream")
    stream = response.stream
    if isinstance(stream, httpx2.AsyncByteStream):
        response.stream = _BoundedStream(stream, limit, refusal, event_stream)
