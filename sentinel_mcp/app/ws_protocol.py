"""The WebSocket protocol the front runs under uvicorn (the A2A binding's ``/a2a/ws``): uvicorn's sans-I/O
protocol, with flow control on what the server writes on its own.

uvicorn answers each ping with a pong written at once, and stops reading only while a message waits for the
application: a peer that sends pings and never reads had the server read them for ever, a pong for each kept
in memory (48 MiB of pings, 48 MiB of pongs held). Here a connection whose unsent bytes pass the transport's
high-water mark is not read until they drain (below its low-water mark), as a stream's reader and writer are
paired in asyncio; what is held is bounded by the mark and one read. Such a peer then misses the keep-alive
pings' deadline and is closed by uvicorn as any peer that stops answering.

The HTTP answers this protocol writes on its own carry the safe headers (app/safe_headers.py), as every other
answer of the front: the ``websockets`` library's 400/426 to a malformed handshake and 414/431 to a head past
its limits, uvicorn's 500 when the app raised or returned before answering the upgrade and its 403 when the
app closed before accepting. None goes through ``SafeHeaders`` (the app's own refusal does, and is left as
it is), so each is given them where it is sent: the handshake's ``send_response``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.datastructures import Headers
from websockets.http11 import Response

from sentinel_mcp.app.open_connections import OpenConnections
from sentinel_mcp.app.safe_headers import own_safe_headers, with_safe_headers

SWITCHING = 101  # the upgrade accepted: no page a browser renders, sent as uvicorn builds it
# uvicorn's own answer to a handshake websockets could not parse and answered nothing to
INVALID_REQUEST = "Failed to open a WebSocket connection: invalid request.\n"


def safe_response(response: Response) -> Response:
    """``response`` with the safe headers, unless it is the upgrade's 101 or has them (the app's own)."""
    if response.status_code == SWITCHING:
        return response
    pairs = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.raw_items()]
    if own_safe_headers(pairs):  # through SafeHeaders already
        return response
    headers = Headers((k.decode("latin-1"), v.decode("latin-1")) for k, v in with_safe_headers(pairs))
    return dataclasses.replace(response, headers=headers)


class FrontWebSocketProtocol(WebSocketsSansIOProtocol):
    # the place the HTTP connection upgraded took (``open_connections``): its count and peer address
    _counted: tuple[OpenConnections, str] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # every handshake answer goes through here: uvicorn's (refusals, the app's own, the 101) and the
        # websockets library's own to a head it could not parse (``ServerProtocol.parse``)
        sent = self.conn.send_response
        self.conn.send_response = lambda response: sent(safe_response(response))  # type: ignore[method-assign]

    def handle_handshake_exception(self) -> None:
        # uvicorn's, its own 400 (where websockets answered nothing) given the safe headers too
        self.handshake_complete = True
        self.close_sent = True
        output = b"".join(self.conn.data_to_send())
        if not output:
            output = safe_response(self.conn.reject(400, INVALID_REQUEST)).serialize()
        self.transport.write(output)
        self.transport.close()

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
