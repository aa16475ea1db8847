"""The WebSocket protocol the front runs under uvicorn (the A2A binding's ``/a2a/ws``): uvicorn's sans-I/O
protocol, with flow control on what the server writes on its own.

uvicorn answers each ping with a pong written at once, and stops reading only while a message waits for the
application: a peer that sends pings and never reads had the server read them for ever, a pong for each kept
in memory (48 MiB of pings, 48 MiB of pongs held). Here a connection whose unsent bytes pass the transport's
high-water mark is not read until they drain (below its low-water mark), as a stream's reader and writer are
paired in asyncio; what is held is bounded by the mark and one read. Such a peer then misses the keep-alive
pings' deadline and is closed by uvicorn as any peer that stops answering.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from sentinel_mcp.app.open_connections import OpenConnections


class FrontWebSocketProtocol(WebSocketsSansIOProtocol):
    # the place the HTTP connection upgraded took (``open_connections``): its count and peer address
    _counted: tuple[OpenConnections, str] | None = None

    def counted_as(self, counts: OpenConnections, peer: str) -> None:
        """This connection holds the place its HTTP protocol took (given back when it ends)."""
        self._counted = (counts, peer)

    def connection_lost(self, exc: Exception | None) -> None:
        counted, self._counted = self._counted, None
        if counted is not None:
            counted[0].give_back(counted[1], self)
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        super().resume_writing()
        if not self.read_paused:  # (uvicorn's own pause: a message waits for the application)
            self.transport.resume_reading()

    async def receive(self) -> Any:
        message = await super().receive()
        if not self.writable.is_set():  # uvicorn resumed reading for the next message: not while writes wait
            self.transport.pause_reading()
        return message
