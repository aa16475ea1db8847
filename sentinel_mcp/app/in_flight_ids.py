"""A request POSTed on a handshake-era session (``Mcp-Session-Id``) whose id names a stream the session
already has open is refused with a JSON-RPC error.

The SDK's transport keys a request's response stream by ``str(id)``, and a new request with a key already
there replaces the stream of the one in flight: ids ``5`` and ``"5"`` (different ids to JSON-RPC), a repeated
id, or the id ``"_GET_stream"`` (the key of the session's standalone GET stream). The newer request's events
then went to one POST and the older one's end closed the other: a call was left with no answer, or the
session's standalone stream (its catalog changes, its questions) was cut. Only the caller's own session is
looked at; anything else goes on unchanged (the owners' check answers a session of someone else).

The session's dispatcher keeps its own table of requests in flight, keyed as it correlates ids
(``coerce_request_id``: ``5``, ``"05"``, ``"+5"``, ``" 5"`` are one): a second id that is one with a stream's
there, though not as text, took the first call's entry (a cancellation of the first cancelled the second, and
the first could no longer be cancelled). So an id clashes with a stream when the two are one either way.
"""

from __future__ import annotations

import json
from typing import Callable

from mcp.server.streamable_http import GET_STREAM_KEY
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import ASGIApp, Receive, Scope, Send

from sentinel_mcp.app.lean_calls import MESSAGE_KEY
from sentinel_mcp.core.wire_limits import INVALID_REQUEST, error_response
from sentinel_mcp.gateway.in_flight_requests import correlation_key
from sentinel_mcp.identity.resolver import SCOPE_KEY

# the session manager and the owner of each session id, while the runtime runs (as LeanSessionCalls gets them)
Target = Callable[[], "tuple[StreamableHTTPSessionManager, Callable[[str], str | None]] | None"]


class InFlightIds:
    def __init__(self, app: ASGIApp, *, target: Target) -> None:
        self.app = app
        self.target = target

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = scope.get(MESSAGE_KEY)
        if not (isinstance(message, dict) and "method" in message and "id" in message
                and scope.get("path") == "/mcp"):
            return await self.app(scope, receive, send)
        sid = _session_id(scope)
        target = self.target() if sid is not None else None
        if target is None or sid is None:
            return await self.app(scope, receive, send)
        manager, owner_of = target
        transport = manager._server_instances.get(sid)
        who = str(getattr(scope.get(SCOPE_KEY), "name", ""))
        key = str(message["id"])
        if transport is None or owner_of(sid) != who:
            return await self.app(scope, receive, send)
        if key != GET_STREAM_KEY and key not in transport._request_streams:
            mine = correlation_key(message["id"])
            if mine is None or all(correlation_key(k) != mine for k in list(transport._request_streams)
                                   if k != GET_STREAM_KEY):
                return await self.app(scope, receive, send)
        answer = error_response(message["id"], INVALID_REQUEST,
                                "Invalid Request: a request with this id is still in flight in this session "
                                "(ids are told apart as the dispatcher tells them: 5, \"5\" and \"05\" are "
                                "one); use another id")
        body = json.dumps(answer).encode()
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _session_id(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == b"mcp-session-id":
            return str(value.decode("latin-1"))
    return None

