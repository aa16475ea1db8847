"""The HTTP host: streamable HTTP at /mcp, legacy SSE at /sse, A2A when enabled, one Starlette app.

DNS-rebinding protection (Host and Origin checked) and an optional bearer token cover every route but the
public discovery ones (/healthz, the A2A agent card).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from typing import Any, AsyncIterator

from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sentinel_mcp.gateway.runtime import Runtime

log = logging.getLogger(__name__)

PUBLIC_PATHS = ("/healthz", "/.well-known/agent-card.json")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


class HostAndTokenGuard:
    """Pure ASGI middleware: refuse foreign Host/Origin headers (421/403) and missing bearer tokens (401)."""

    def __init__(self, app: ASGIApp, *, bind_host: str, port: int, token: str | None,
                 extra_hosts: list[str]) -> None:
        self.app = app
        self.token = token
        hosts = {bind_host, *LOCAL_HOSTS} if bind_host in LOCAL_HOSTS else {bind_host}
        self.allowed_hosts = {f"{h}:{port}" for h in hosts} | set(hosts) | set(extra_hosts)
        self.allowed_origins = {f"http://{h}" for h in self.allowed_hosts} | {f"https://{h}" for h in self.allowed_hosts}
        self.check_hosts = bind_host not in ("0.0.0.0", "::") or bool(extra_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.check_hosts and headers.get("host") not in self.allowed_hosts:
            return await _reject(scope, receive, send, 421, "invalid Host header (DNS rebinding protection)")
        origin = headers.get("origin")
        if origin and self.check_hosts and origin not in self.allowed_origins:
            return await _reject(scope, receive, send, 403, "invalid Origin header")
        path = scope.get("path", "")
        if self.token and not path.startswith(PUBLIC_PATHS):
            given = headers.get("authorization", "")
            api_key = headers.get("x-api-key", "")
            ok = hmac.compare_digest(given, f"Bearer {self.token}") or hmac.compare_digest(api_key, self.token)
            if not ok:
                return await _reject(scope, receive, send, 401, "missing or wrong bearer token",
                                     extra=[(b"www-authenticate", b'Bearer realm="sentinel"')])
        await self.app(scope, receive, send)


async def _reject(scope: Scope, receive: Receive, send: Send, status: int, message: str,
                  extra: list[tuple[bytes, bytes]] | None = None) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 4000 + status % 1000 if status < 1000 else 1008,
                    "reason": message})
        return
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


def build_http_app(runtime_cm: Any, *, host: str, port: int, token: str | None = None,
                   extra_hosts: list[str] | None = None, extra_routes: list[BaseRoute] | None = None) -> tuple[Starlette, dict[str, Any]]:
    """``runtime_cm`` is an async context manager yielding a ``Runtime`` (entered in the app's lifespan)."""
    holder: dict[str, Any] = {}

    class _LateMCP:
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            await holder["mcp_app"](scope, receive, send)

    sse = SseServerTransport("/messages/")

    async def handle_sse(request: Request) -> Response:
        rt: Runtime = holder["runtime"]
        async with sse.connect_sse(request.scope, request.receive, request._send) as (read, write):
            server = rt.front.server
            await server.run(read, write, server.create_initialization_options())
        return Response()

    async def healthz(request: Request) -> JSONResponse:
        rt: Runtime | None = holder.get("runtime")
        if rt is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        ups = {n: {"state": u.state, "protocol": u.protocol_version, "tools": len(u.tools),
                   "breaker": u.breaker.state, "reconnects": u.reconnects, "last_error": u.last_error}
               for n, u in rt.manager.upstreams.items()}
        ok = all(u["state"] == "ready" for u in ups.values())
        body = {"status": "ok" if ok else "degraded", "tools": len(rt.manager.catalog.tools),
                "policy": rt.gateway.guard.version, "upstreams": ups, "problems": rt.problems}
        cortex = rt.services.get("cortex")  # the llm built-in, when mounted: is the model loaded, which one
        if cortex is not None:
            from sentinel_mcp.llm.status import model_status
            body["model"] = model_status(cortex.engine)
        return JSONResponse(body)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with runtime_cm as rt:
            holder["runtime"] = rt
            manager = StreamableHTTPSessionManager(app=rt.front.server, json_response=False, stateless=False)
            holder["mcp_app"] = StreamableHTTPASGIApp(manager)
            async with manager.run():
                yield

    routes: list[BaseRoute] = [
        Route("/mcp", _LateMCP(), methods=["GET", "POST", "DELETE"]),
        Route("/sse", handle_sse, methods=["GET"]),
        Mount("/messages/", app=sse.handle_post_message),
        Route("/healthz", healthz, methods=["GET"]),
        *(extra_routes or []),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(HostAndTokenGuard, bind_host=host, port=port, token=token, extra_hosts=extra_hosts or [])
    return app, holder
