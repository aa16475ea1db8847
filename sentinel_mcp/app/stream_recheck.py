"""A streamed response's caller is checked again while it streams.

A request is authenticated once, when it arrives; most answers are sent at once. A stream is not: a
2025-era GET stream, a ``subscriptions/listen`` stream, a legacy ``/sse`` stream and a long call's progress
stay open for hours, and a client certificate revoked (``sentinel-mcp tls revoke``), expired, or whose CA was
taken out of ``ca`` while one was open went on receiving notifications as its principal. So before each
further chunk of a streamed body (at most once a second; a quiet stream is checked at its next chunk, SSE
pings included) the caller's credentials are checked again as a new request's would be; if they no longer
hold, the response is ended there (the client sees its stream close; a reconnect is refused as any request
is) and nothing more is sent. An answer sent in one piece costs nothing here.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from starlette.types import Message, Send

from sentinel_mcp.identity.resolver import AuthFailed

log = logging.getLogger(__name__)

RECHECK_SECONDS = 1.0  # the front re-reads its TLS files at most once a second too


class StreamRecheck:
    def __init__(self, send: Send, recheck: Callable[[], Any], path: str) -> None:
        self._send = send
        self._recheck = recheck
        self._path = path
        self._streaming = False  # a body chunk with more to come was sent
        self._checked = time.monotonic()
        self.cut: str | None = None  # why the stream was ended

    async def send(self, message: Message) -> None:
        if self.cut is not None:
            return  # the response was ended: the app's late chunks go nowhere
        if message["type"] == "http.response.body":
            if self._streaming and time.monotonic() - self._checked >= RECHECK_SECONDS:
                self._checked = time.monotonic()
                try:
                    self._recheck()
                except AuthFailed as e:
                    self.cut = str(e)
                    log.warning("a stream of %s was ended: its caller's credentials no longer hold (%s)",
                                self._path[:200], self.cut[:500])
                    await self._send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
            if message.get("more_body"):
                self._streaming = True
        await self._send(message)
