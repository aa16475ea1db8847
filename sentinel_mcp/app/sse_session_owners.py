"""The legacy SSE front's sessions belong to the principal that opened them.

``GET /sse`` opens a session and tells the client where to post (``/messages/?session_id=<hex>``); every
message posted there is read as that client's (its answers to the questions asked on the stream included). The
SDK binds a session to ``scope["user"]``, which Sentinel's principals do not set, so without this any caller
with a valid credential who learnt the id could post into another principal's session. Here the id is taken
from the stream's first event and kept with the opener's principal while the stream is open; a post naming
a session of another principal, or none open (however its id is spelt: the SDK reads it as a UUID in any of
its forms), is answered as if it did not exist (404).

An open stream is a session like a streamable-HTTP one, and counts against the same share of open sessions
(``McpSessionOwners``): uncounted, one principal could hold any number open (~80 KB and a file descriptor
each), up to the gateway's file descriptors, and nobody else got in.
"""

from __future__ import annotations

import re
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs
from uuid import UUID

from starlette.types import ASGIApp, Receive, Scope, Send

from sentinel_mcp.app.lean_calls import MESSAGE_KEY
from sentinel_mcp.app.sse_backlog import SseBacklog
from sentinel_mcp.gateway.session_tables import Shares
from sentinel_mcp.identity.resolver import SCOPE_KEY

_ENDPOINT = re.compile(rb"event: endpoint\r?\ndata: [^\r\n]*[?&]session_id=([0-9a-fA-F]{32})")
Reject = Callable[[Scope, Receive, Send, int, str], Awaitable[None]]


def _who(scope: Scope) -> str:
    return str(getattr(scope.get(SCOPE_KEY), "name", ""))


class SseSessionOwners:
    def __init__(self, reject: Reject, shares: Shares) -> None:
        # session id (32 hex digits) -> its opener's principal name, while its stream is open
        self._owner: dict[str, str] = {}
        self._backlog: dict[str, SseBacklog] = {}  # session id -> its requests not yet answered on its stream
        self._reject = reject
        self.shares = shares

    def opening(self, scope: Scope, send: Send) -> tuple[Send, Callable[[], None], SseBacklog] | str:
        """``send`` for the ``GET /sse`` handler, noting the session its first event names; what to call when
        the stream ends; and the session's backlog (its write stream reports answers there). Or, when the
        caller may open no more sessions, why."""
        who = _who(scope)
        refused = self.shares.take(who)
        if refused is not None:
            return refused
        opened: list[str] = []
        backlog = SseBacklog()
        head = bytearray()  # the stream's first bytes (the event may come in several pieces)

        async def noting(message: Any) -> None:
            if not opened and len(head) < 4096 and message.get("type") == "http.response.body":
                head.extend(message.get("body", b""))
                found = _ENDPOINT.search(head)
                if found is not None:
                    sid = found.group(1).decode().lower()
                    opened.append(sid)
                    self._owner[sid] = who
                    self._backlog[sid] = backlog
            await send(message)

        def closed() -> None:
            for sid in opened:
                self._owner.pop(sid, None)
                self._backlog.pop(sid, None)
            self.shares.give_back(who)

        return noting, closed, backlog

    def guarding(self, app: ASGIApp) -> ASGIApp:
        """The ``/messages/`` app, refusing posts into a session this caller did not open."""

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope.get("type") == "http":
                values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_id", [])
                if not values:
                    return await self._reject(scope, receive, send, 400, "session_id is required")
                if len(values) > 1:
                    return await self._reject(scope, receive, send, 400, "session_id given more than once")
                try:
                    sid = UUID(hex=values[0]).hex
                except ValueError:
                    return await self._reject(scope, receive, send, 400, "invalid session_id")
                if self._owner.get(sid) != _who(scope):
                    return await self._reject(scope, receive, send, 404, "session not found")
                backlog = self._backlog.get(sid)
                refused = backlog.posted(scope.get(MESSAGE_KEY)) if backlog is not None else None
                if refused is not None:
                    return await self._reject(scope, receive, send, *refused)
            await app(scope, receive, send)

        return guarded
