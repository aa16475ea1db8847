"""A legacy SSE session's requests waiting for their answers to be written to its event stream, bounded.

A request POSTed to ``/messages/`` is taken at once (202) and its answer goes out on the session's one event
stream. A client that posts without reading that stream had every request's handler wait for the stream,
with no bound: 40,000 posted ``tools/list`` held 100 MB that stayed after the stream closed. Here each
session holds at most ``MAX_WAITING`` requests whose answers have not been handed to the stream; past it a
POST is refused (429, a JSON-RPC error with its id) until the client reads its answers.

A request counts from its POST until an answer with its id is handed to the stream; a request the client
cancels (``notifications/cancelled``, which may never be answered) stops counting then. A request whose id is
one of those still counting (as the SDK's dispatcher correlates ids: 5, "5" and "05" are one) is refused with
a JSON-RPC error (400): the dispatcher would overwrite the call in flight, and both answers went out on the
stream under one id (``gateway/in_flight_requests``).
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCResponse

from sentinel_mcp.gateway.in_flight_requests import REPEATED, InFlightRequests

MAX_WAITING = 256


class SseBacklog:
    """One session's requests not yet answered on its stream."""

    def __init__(self) -> None:
        self.waiting = InFlightRequests()

    def posted(self, message: Any) -> tuple[int, str] | None:
        """Count a POSTed message; or, when the session already holds ``MAX_WAITING`` or the message repeats
        an id still waiting, the status and reason it is refused with."""
        if not isinstance(message, dict) or "method" not in message:
            return None
        if self.waiting.repeats(message):
            return 400, REPEATED
        if "id" in message and len(self.waiting) >= MAX_WAITING:
            return 429, (f"{MAX_WAITING} requests of this session are waiting for their answers to be read "
                         "from its event stream; read them, then send more")
        self.waiting.handed_on(message, cancelling=True)  # posts reach the dispatcher in order
        return None

    def answered(self, item: Any) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self.waiting.answered(message.id)


class CountingWriter:
    """The session's write stream, telling ``backlog`` of each answer once the stream has taken it."""

    def __init__(self, stream: Any, backlog: SseBacklog) -> None:
        self._stream = stream
        self._backlog = backlog

    async def send(self, item: Any, /) -> None:
        await self._stream.send(item)
        self._backlog.answered(item)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> CountingWriter:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> bool | None:
        result: bool | None = await self._stream.__aexit__(exc_type, exc_val, exc_tb)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
