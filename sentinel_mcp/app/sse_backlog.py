"""A legacy SSE session's requests waiting for their answers to be written to its event stream, bounded.

A request POSTed to ``/messages/`` is taken at once (202) and its answer goes out on the session's one event
stream. A client that posts without reading that stream had every request's handler wait for the stream,
with no bound: 40,000 posted ``tools/list`` held 100 MB that stayed after the stream closed. Here each
session holds at most ``MAX_WAITING`` requests whose answers have not been handed to the stream; past it a
POST is refused (429, a JSON-RPC error with its id) until the client reads its answers.

A request counts from its POST until an answer with its id is handed to the stream; a request the client
cancels (``notifications/cancelled``, which may never be answered) stops counting then.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCResponse

MAX_WAITING = 256


def _key(rid: Any) -> tuple[str, Any]:
    return (type(rid).__name__, rid)  # 5 and "5" are two requests to JSON-RPC


class SseBacklog:
    """One session's requests not yet answered on its stream."""

    def __init__(self) -> None:
        self.waiting: set[tuple[str, Any]] = set()

    def posted(self, message: Any) -> str | None:
        """Count a POSTed message; or, when the session already holds ``MAX_WAITING``, why it is refused."""
        if not isinstance(message, dict) or "method" not in message:
            return None
        if message["method"] == "notifications/cancelled":
            params = message.get("params")
            if isinstance(params, dict) and "requestId" in params:
                self.waiting.discard(_key(params["requestId"]))
            return None
        if "id" not in message:
            return None
        if len(self.waiting) >= MAX_WAITING:
            return (f"{MAX_WAITING} requests of this session are waiting for their answers to be read from "
                    "its event stream; read them, then send more")
        self.waiting.add(_key(message["id"]))
        return None

    def answered(self, item: Any) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self.waiting.discard(_key(message.id))


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
