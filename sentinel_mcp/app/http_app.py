"""The HTTP host: streamable HTTP at /mcp, legacy SSE at /sse, A2A when enabled, one Starlette app.

Every route but the public discovery ones (/healthz, the A2A agent card) is behind ``CallerGuard``: Host and
Origin checked on every binding (DNS rebinding, cross-site requests), then the caller's principal resolved
from
what it presented and left in the ASGI scope for the MCP front and the A2A endpoints.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import json
import logging
from typing import Any, AsyncIterator
from urllib.parse import urlsplit

from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from sentinel_mcp.a2a.card import WS_PATH
from sentinel_mcp.app.app_boundary import NO_SOCKET, AppBoundary, refuse_upgrade
from sentinel_mcp.app.in_flight_ids import InFlightIds
from sentinel_mcp.app.json_rpc_doors import json_rpc_client_route, refusal_body, request_id
from sentinel_mcp.app.lean_calls import LeanCalls
from sentinel_mcp.app.lean_session_calls import LeanSessionCalls
from sentinel_mcp.app.mcp_head import answer_head
from sentinel_mcp.app import session_dispatch
from sentinel_mcp.app.sse_backlog import CountingWriter
from sentinel_mcp.app.sse_session_owners import SseSessionOwners
from sentinel_mcp.app.runtime import Runtime
from sentinel_mcp.core.host import HostState
from sentinel_mcp.gateway.session_tables import Shares
from sentinel_mcp.gateway.wire_guard import WireGuard
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import OWNER, Principal
from sentinel_mcp.identity.credential_stamp import CredentialCheck
from sentinel_mcp.identity.resolver import RECHECK_KEY, SCOPE_KEY, Authenticator, AuthFailed
from sentinel_mcp.app.stream_recheck import StreamRecheck
from sentinel_mcp.storage.open import storage_status

log = logging.getLogger(__name__)

SOCKET_PATHS = (WS_PATH,)  # the only routes that take a WebSocket upgrade
PUBLIC_PATHS = ("/healthz", "/.well-known/agent-card.json")
# the web console signs people in itself (a browser sends no bearer header), with the same Authenticator;
# Host and Origin are still checked here
SELF_AUTHENTICATED = ("/console/",)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
# the headers the caller check reads (the rest are not decoded on every request)
CHECKED_HEADERS = frozenset((b"host", b"origin", b"authorization", b"x-api-key"))
# headers that name one thing (who calls, which session, which protocol): sent twice, one reader would take
# the first and another the last (the SDK's session look-up and our owner check did): refused
SINGLE_HEADERS = CHECKED_HEADERS | {b"mcp-session-id", b"mcp-protocol-version", b"last-event-id",
                                    b"x-sentinel-session"}
WILDCARDS = ("0.0.0.0", "::", "")
CHALLENGE = (b"www-authenticate", b'Bearer realm="sentinel"')  # on every 401
MAX_HOSTS_KEPT, MAX_KEPT_HOST = 64, 256  # Host verdicts kept per guard, and the longest value kept


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, str | None]:
    """``name[:port]`` or ``[v6][:port]`` -> (name without brackets, port or None); lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        name, _, port = value.partition(":")
        return name, port
    return value, None


class CallerGuard:
    """Pure ASGI middleware: refuse foreign Host (421) and Origin (403) headers on every binding, then resolve
    the caller's principal (401 when no valid credential) into ``scope["sentinel.principal"]``.

    Host names accepted: the loopback names, the bound address, the configured ``allowed_hosts``, and, on a
    wildcard binding, IP literals (a DNS-rebinding page always sends a name). Origins accepted: those hosts
    over
    http(s), the configured ``allowed_origins``; ``null`` and everything else are refused.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        bind_host: str,
        port: int,
        auth: Authenticator,
        extra_hosts: list[str] | None = None,
        extra_origins: list[str] | None = None,
    ) -> None:
        self.app = app
        self.auth = auth
        self.port = port
        bind = bind_host.strip("[]").lower()
        self.wildcard = bind in WILDCARDS
        self.names = {*LOCAL_HOSTS, *(() if self.wildcard else (bind,))}
        self.extra_hosts = {h.lower() for h in extra_hosts or []}
        self.extra_origins = {o.rstrip("/").lower() for o in extra_origins or []}
        self._hosts: dict[str, bool] = {}  # Host values seen -> verdict (bounded: host_allowed)

    def host_allowed(self, value: str | None) -> bool:
        """The Host check (``_host_verdict``); a client sends the same Host on every request, so the verdicts
        on the first few short values are kept (the settings they read are fixed for the guard's life)."""
        verdict = self._hosts.get(value) if value is not None else None
        if verdict is None:
            verdict = self._host_verdict(value)
            if value is not None and len(value) <= MAX_KEPT_HOST and len(self._hosts) < MAX_HOSTS_KEPT:
                self._hosts[value] = verdict
        return verdict

    def _host_verdict(self, value: str | None) -> bool:
        if not value:
            return False
        value = value.strip().lower()
        if value in self.extra_hosts:
            return True
        name, port = _split_host(value)
        if port is not None and self.port and port != str(self.port):
            return False
        return name in self.names or name in self.extra_hosts or (self.wildcard and _ip_literal(name))

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        origin = origin.strip().rstrip("/").lower()
        if origin in self.extra_origins:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        # an origin is ``scheme://host[:port]`` (RFC 6454 6.2): taken in that spelling only ("...#x" and
        # "...?" parsed to an allowed one)
        if parts.scheme not in ("http", "https") or origin != f"{parts.scheme}://{parts.netloc}":
            return False
        if not parts.netloc:
            return False
        if host and parts.netloc == host.strip().lower():
            return True  # same origin as the Host the request was sent to (already checked)
        name, port = _split_host(parts.netloc)
        # an origin without a port is on its scheme's default one (http://127.0.0.1 is port 80): another
        # server of this host, never this one unless it listens there
        port = port if port is not None else ("443" if parts.scheme == "https" else "80")
        if self.port and port != str(self.port):
            return False
        return name in self.names or name in self.extra_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        repeated, headers = _checked_head(scope)
        if repeated is not None:
            return await _reject(scope, receive, send, 400, f"the {repeated} header is sent more than once")
        host = headers.get("host")
        if not self.host_allowed(host):
            return await _reject(
                scope,
                receive,
                send,
                421,
                "invalid Host header (DNS rebinding protection); add the name to sentinel.http.allowed_hosts",
            )
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin, host):
            return await _reject(
                scope, receive, send, 403, "invalid Origin header; add it to sentinel.http.allowed_origins"
            )
        path = scope.get("path", "")
        if scope["type"] == "websocket" and path not in SOCKET_PATHS:  # an HTTP route's app reads no socket
            return await _reject(scope, receive, send, 404, NO_SOCKET)
        if not path.startswith(PUBLIC_PATHS) and not (
            path.startswith(SELF_AUTHENTICATED) or path == "/console"
        ):
            credentials = Credentials.from_scope(scope, headers)
            try:
                scope[SCOPE_KEY] = self.auth.authenticate(credentials)
            except AuthFailed as e:
                return await _reject(
                    scope,
                    receive,
                    send,
                    401,
                    str(e),
                    extra=[CHALLENGE],
                )
            if scope["type"] == "websocket":  # its messages are requests too: checked again, each
                scope[RECHECK_KEY] = CredentialCheck(self.auth, credentials, scope[SCOPE_KEY])
            elif (credentials.tls or {}).get("client_cert_chain") or self.auth.may_lapse(scope[SCOPE_KEY]):
                # a certificate can be revoked or expire while an answer streams, and a token followed from
                # its file replaced (the owner's, rotated after a leak): checked again as it streams
                # (stream_recheck.py), and by a call that waited inside Sentinel before it is sent
                # (gateway/caller_recheck.py), and by another process resuming what it started
                # (credential_stamp.py); the other tokens hold for the process's life: no cost
                scope[RECHECK_KEY] = CredentialCheck(self.auth, credentials, scope[SCOPE_KEY])
                refuse = functools.partial(_reject, scope, receive, send, 401, extra=[CHALLENGE])
                send = StreamRecheck(send, scope[RECHECK_KEY], path, refuse).send
        await self.app(scope, receive, send)


def checked_headers(scope: Scope) -> dict[str, str]:
    """Host, Origin, Authorization and X-API-Key as ``{name.decode().lower(): value.decode()}`` of all the
    scope's headers would hold them (the last of a repeated one), without decoding the others. Matching the
    lowered bytes is the same test: lower-casing a Latin-1 character outside ASCII never gives ASCII."""
    found: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        key = key.lower()
        if key in CHECKED_HEADERS:
            found[key.decode("latin-1")] = value.decode("latin-1")
    return found


def _checked_head(scope: Scope) -> tuple[str | None, dict[str, str]]:
    """The first of ``SINGLE_HEADERS`` the request sends more than once (or None) and, when there is none,
    ``checked_headers(scope)``: one pass over the headers, each name lowered once (``CHECKED_HEADERS`` are
    among ``SINGLE_HEADERS``)."""
    found: dict[str, str] = {}
    seen: set[bytes] = set()
    for key, value in scope.get("headers", ()):
        key = key.lower()
        if key in SINGLE_HEADERS:
            if key in seen:
                return key.decode("latin-1"), found
            seen.add(key)
            if key in CHECKED_HEADERS:
                found[key.decode("latin-1")] = value.decode("latin-1")
    return None, found


class McpSessionOwners:
    """Each ``Mcp-Session-Id`` belongs to the principal whose request opened it: another principal presenting
    it (to send on it, listen to it or end it) is told the session does not exist (404).

    An entry lives as long as its session (``ended``, called however the session ends). A principal holding
    its share of live sessions, or a table at its total, is refused a new session (503); no live session is
    ever pushed out to make room (one principal's churn cut everyone else's sessions off)."""

    def __init__(self, per_principal: int = 1_000, capacity: int = 10_000) -> None:
        self.shares = Shares("MCP_SESSIONS", "open sessions", per_principal, capacity)
        self._owner: dict[str, str] = {}

    def owner_of(self, sid: str) -> str | None:
        """The principal (its name) that opened session ``sid``, None for a session not held here."""
        return self._owner.get(sid)

    def ended(self, sid: str) -> None:
        """Session ``sid`` is over (deleted, idle past its timeout, its transport closed): forget it."""
        who = self._owner.pop(sid, None)
        if who is not None:
            self.shares.give_back(who)

    def __len__(self) -> int:
        return len(self._owner)

    async def __call__(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        principal = scope.get(SCOPE_KEY)
        who = getattr(principal, "name", "")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        sid = headers.get("mcp-session-id")
        # a session opened here is in the table until it ends; one not held is nobody's: not found (its
        # client starts a new one), rather than open to whoever names it
        if sid is not None and self._owner.get(sid) != who:
            return await _reject(scope, receive, send, 404, "session not found")
        version = headers.get("mcp-protocol-version")
        if sid is not None or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS):
            return await app(scope, receive, send)  # no session opens (the SDK routes by this header)
        # a request the SDK may open a session for: its place is taken now, before anything is awaited
        # (checked here and counted when the answer named the session, requests sent together all passed
        # the check: 100 sessions for a share of 2), and given back unless the answer names a new session
        refused = self.shares.take(who)
        if refused is not None:  # the caller's own share (or everyone's room) is full: no new session
            return await _reject(scope, receive, send, 503, refused)
        placed = [False]

        async def capture(message: Any) -> None:
            if message["type"] == "http.response.start":
                for k, v in message.get("headers", []):
                    if k.decode("latin-1").lower() == "mcp-session-id":
                        opened = v.decode("latin-1")
                        if opened not in self._owner and not placed[0]:
                            placed[0] = True  # the place taken is this session's until it ends
                            self._owner[opened] = who
            await send(message)

        try:
            await app(scope, receive, capture)
        finally:
            if not placed[0]:
                self.shares.give_back(who)


def _ending_sessions(manager: StreamableHTTPSessionManager, owners: McpSessionOwners) -> None:
    """Tell ``owners`` of every session the manager lets go. The SDK has no hook for it: every way a session
    ends (DELETE, idle expiry, a crash, a refused opening request) goes through its ``_discard_session``."""
    discard = manager._discard_session

    async def discarding(session_id: str, transport: Any) -> None:
        owners.ended(session_id)
        await discard(session_id, transport)

    manager._discard_session = discarding  # type: ignore[method-assign]


def _schema_lookup(rt: Runtime) -> Any:
    """A tool's input schema as the caller's ``tools/list`` shows it (None: not shown to this caller)."""

    def schema_of(name: str, scope: Scope) -> Any:
        found = scope.get(SCOPE_KEY)
        principal = found if isinstance(found, Principal) else OWNER  # as the front resolves it
        tool = rt.gateway.catalog_tool(name, principal)  # as its tools/list shows it
        return tool.input_schema if tool is not None else None

    return schema_of


async def _reject(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    message: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    if scope["type"] == "websocket":
        return await refuse_upgrade(scope, send, status, message, extra)
    # on a JSON-RPC door (or the legacy /sse stream) a JSON-RPC error (its request's id when parsed already:
    # never read before a caller check), else a plain object
    door = json_rpc_client_route(scope.get("path", ""))
    body = refusal_body(message, request_id(scope)) if door else json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_http_app(
    runtime_cm: Any,
    *,
    host: str,
    port: int,
    auth: Authenticator,
    extra_hosts: list[str] | None = None,
    extra_origins: list[str] | None = None,
    extra_routes: list[BaseRoute] | None = None,
) -> tuple[Starlette, HostState[Runtime]]:
    """``runtime_cm`` is an async context manager yielding a ``Runtime`` (entered in the app's lifespan);
    ``auth`` resolves every caller's principal (``http_auth_for(config)`` builds it from a config)."""
    holder: HostState[Runtime] = HostState()

    owners = McpSessionOwners()
    served: list[tuple[Any, Any, Any]] = []  # what the lean path serves with, while the runtime runs
    sessions: list[StreamableHTTPSessionManager] = []  # the manager of 2025-era sessions, while it runs

    class _LateMCP:
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            assert holder.mcp_app is not None  # the lifespan makes it before the server takes a request
            if scope.get("method") == "GET":
                # sessions keep no event store, so there is nothing to resume: the SDK returned no response
                # at all for a GET carrying Last-Event-ID (a plain-text 500); the stream opens afresh instead
                headers = scope.get("headers", ())
                scope["headers"] = [(k, v) for k, v in headers if k.lower() != b"last-event-id"]
            elif scope.get("method") == "HEAD":  # GET's head, no stream opened (mcp_head.py)
                return await owners(head_app, scope, receive, send)
            await owners(holder.mcp_app, scope, receive, send)

    async def head_app(scope: Scope, receive: Receive, send: Send) -> None:
        assert holder.mcp_app is not None
        await answer_head(lambda: sessions[0] if sessions else None, holder.mcp_app, scope, receive, send)

    sse = SseServerTransport("/messages/")
    sse_owners = SseSessionOwners(_reject, owners.shares)  # an SSE stream is an open session too

    async def handle_sse(request: Request) -> Response:
        rt = holder.runtime
        assert rt is not None  # the lifespan starts it before the server takes a request
        opened = sse_owners.opening(request.scope, request._send)
        if isinstance(opened, str):
            return JSONResponse({"error": opened}, status_code=503)
        noting, closed, backlog = opened
        try:
            async with sse.connect_sse(request.scope, request.receive, noting) as (read, write):
                server = rt.front.server
                # answers handed to the stream are counted off the session's backlog (sse_backlog.py)
                counted: Any = CountingWriter(write, backlog)
                await server.run(read, counted, server.create_initialization_options())
        finally:
            closed()
        return Response()

    async def healthz(request: Request) -> JSONResponse:
        rt: Runtime | None = holder.runtime
        if rt is None:
            return JSONResponse({"status": "starting"}, status_code=503)
        catalog = rt.catalog_health
        ups = {
            u.name: {
                "state": u.state,
                "protocol": u.protocol,
                "tools": u.tools,
                "breaker": u.breaker,
                "reconnects": u.reconnects,
                "last_error": u.last_error,
                **({} if u.loaded else {"loaded": False}),  # a built-in served from its description
            }
            for u in catalog.upstreams()
        }
        # shadowed tools and resources, listings past their bounds: say so
        conflicts = catalog.problems
        ok = all(u["state"] == "ready" for u in ups.values()) and not conflicts
        records = await rt.gateway.records.problem()  # probes a degraded store, so health recovers by itself
        tls, tls_problems = holder.tls_status() if holder.tls_status is not None else (None, [])
        # a rulebase version the cluster published that this replica cannot load: it keeps its own, and says
        # so
        policy_sync = rt.gateway.guard.cluster_problem
        # a hot reload that failed: the last good rulebase stays in charge, and health says so
        policy_sync = policy_sync or rt.gateway.guard.reload_problem
        if policy_sync:
            ok = False
        body = {
            "status": "ok" if ok and records is None else "degraded",
            "tools": catalog.tool_count,
            "policy": rt.gateway.guard.version,
            "upstreams": ups,
            **({"tls": tls} if tls is not None else {}),
            "problems": [*rt.problems, *conflicts, *tls_problems],
            "storage": storage_status(),
            "instance": rt.instance.id if rt.instance else None,
            "replica": rt.services.replica,
        }
        if policy_sync:
            body["problems"].append(policy_sync)
            body["policy_problem"] = policy_sync
        if records is not None:
            body["cause"] = records
        code = 200
        policy_problem = rt.policy_problem
        if policy_problem:  # fail closed: no call is served, and health says so
            body |= {"status": "error", "problem": policy_problem}
            code = 503
        cortex = rt.services.cortex  # the llm built-in, when mounted: is the model loaded, which one
        if cortex is not None:
            from sentinel_mcp.llm.status import operator_status

            body["model"] = operator_status(cortex.engine)  # shown below to the operator only
            llm_problem = getattr(cortex, "problem", None)  # its lazy build failed (llm/lazy_cortex.py)
            if llm_problem:
                body["model"]["problem"] = llm_problem
                body["problems"].append(f"llm: {llm_problem}")
                if body["status"] == "ok":
                    body["status"] = "degraded"
        try:
            who = auth.authenticate(Credentials.from_scope(request.scope))
        except AuthFailed:
            who = None
        if who is None or not who.is_operator:
            # public (a probe needs no token): the status word only; upstreams, file paths, causes and every
            # party's figures of the model are the operator's (as /metrics' whole view), not another
            # principal's, even one that may reach every tool, nor another agent's
            return JSONResponse({"status": body["status"]}, status_code=code)
        return JSONResponse(body, status_code=code)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with runtime_cm as rt:
            holder.runtime = rt
            session_dispatch.install()  # the lean 2025 path hands its calls to a session's dispatcher
            manager = StreamableHTTPSessionManager(app=rt.front.server, json_response=False, stateless=False)
            _ending_sessions(manager, owners)
            rt.front.tables["mcp_sessions"] = owners.shares
            holder.mcp_app = StreamableHTTPASGIApp(manager)
            async with manager.run(), contextlib.AsyncExitStack() as mounted:
                served[:] = [(rt.front.server, manager._lifespan_state, _schema_lookup(rt))]  # set by run()
                sessions[:] = [manager]
                for lifespan_of in holder.lifespans:  # A2A, the console: in the order they were mounted
                    await mounted.enter_async_context(lifespan_of(rt))
                try:
                    yield
                finally:
                    served.clear()
                    sessions.clear()

    routes: list[BaseRoute] = [
        Route("/mcp", _LateMCP(), methods=["GET", "POST", "DELETE"]),
        Route("/sse", handle_sse, methods=["GET"]),
        Mount("/messages/", app=sse_owners.guarding(sse.handle_post_message)),
        Route("/healthz", healthz, methods=["GET"]),
        *(extra_routes or []),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    # the common 2025-era tools/call on an open session skips the SDK's per-POST machinery (the innermost)
    app.add_middleware(LeanSessionCalls, target=lambda: (sessions[0], owners.owner_of) if sessions else None)
    # a 2025-era request whose id names a stream its session has open would replace that stream: refused
    app.add_middleware(InFlightIds, target=lambda: (sessions[0], owners.owner_of) if sessions else None)
    # the common 2026-era tools/call skips the SDK's HTTP transport (inside both guards: checked first)
    app.add_middleware(LeanCalls, target=lambda: served[0] if served else None)
    app.add_middleware(WireGuard)  # inside the caller check: strangers are refused before any parsing
    app.add_middleware(
        CallerGuard,
        bind_host=host,
        port=port,
        auth=auth,
        extra_hosts=extra_hosts,
        extra_origins=extra_origins,
    )
    # the outermost: no exception leaves the app, and every error at a JSON-RPC door is JSON-RPC
    app.add_middleware(AppBoundary)
    return app, holder
