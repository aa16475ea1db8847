"""``HEAD /mcp``: the head a GET would get, and no stream opened.

The SDK's transport takes GET, POST and DELETE: a principal's HEAD got its 405, where RFC 9110 (9.3.2) has a
HEAD answered with GET's header fields. Run as a GET, it would open the session's one standalone SSE stream
(server messages meant for the client's own stream went to it, and a client's GET meanwhile got 409), so it is
never run as one when a GET would open that stream: the same head is made here, the SDK's own validation
asked first (an Accept without ``text/event-stream`` is its 406, a request that is not the session's its 400
or 404; a protocol version of no handshake era is routed away from the session, its GET a 405). Every other
HEAD is a GET the SDK refuses without opening anything (no session, another's, a stream open already: 409):
asked of the SDK as a GET, and its answer's body goes unsent (uvicorn sends none to a HEAD, as the request's
method is HEAD on the connection).
"""

from __future__ import annotations

from typing import Callable

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http import GET_STREAM_KEY, MCP_SESSION_ID_HEADER, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from sentinel_mcp.app.lean_session_calls import sse_head


async def answer_head(target: Callable[[], StreamableHTTPSessionManager | None], app: ASGIApp, scope: Scope,
                      receive: Receive, send: Send) -> None:
    """Answer a HEAD of /mcp (``scope``) as GET's head; ``app``: the SDK's, for every GET that opens no
    stream. The caller's ownership of the session is checked before (``McpSessionOwners``)."""
    as_get = {**scope, "method": "GET"}
    manager = target()
    request = Request(as_get, receive)
    sid = request.headers.get(MCP_SESSION_ID_HEADER)
    version = request.headers.get("mcp-protocol-version")
    transport = manager._server_instances.get(sid) if manager is not None and sid is not None else None
    # a version header of no handshake era is routed by the SDK away from the session (its GET: 405)
    if (transport is None or manager is None or sid is None or transport.is_terminated
            or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS)
            or GET_STREAM_KEY in transport._request_streams):
        return await app(as_get, receive, send)
    user = scope.get("user")
    requestor = authorization_context(user) if isinstance(user, AuthenticatedUser) else None
    if requestor != manager._session_owners.get(sid) or not check_accept_headers(request)[1]:
        return await app(as_get, receive, send)  # the SDK's 404 or 406, as to a GET
    if not await transport._validate_request_headers(request, send):
        return  # the SDK's refusal went out, as to a GET
    await send({"type": "http.response.start", "status": 200, "headers": sse_head(transport)})
    await send({"type": "http.response.body", "body": b""})
