"""The lean path: a 2026-07-28 single-request ``tools/call`` POSTed to /mcp, served without the SDK's HTTP
transport.

The SDK's streamable-HTTP entry costs more per call than the gateway behind it: the session manager, a
Starlette ``Request`` body re-read, a memory stream and a task group per request (to switch to SSE if the
handler emits progress), and a pydantic round trip of the envelope. The common call needs none of that: one
JSON object in, one JSON object out. This layer sits inside ``CallerGuard`` (Host, Origin, principal) and
``WireGuard`` (size limit, JSON-RPC shape, which leaves the parsed message in the scope), takes only the
exact common case and hands everything else to the SDK unchanged (its body replayed):

- POST /mcp, ``MCP-Protocol-Version: 2026-07-28``, no ``Mcp-Session-Id``, ``Content-Type:
  application/json`` (the only media type WireGuard lets by, written so: ``core/media_type.py``), an
  Accept that takes JSON and SSE, no ``Mcp-Param-*`` header, no routing header,
  Content-Type or Accept sent twice;
- a request object with an id, ``method: tools/call``, ``params._meta`` without a progress token or a log
  level (those make the SDK stream notifications as SSE);
- the SDK's own envelope ladder (``classify_inbound_request``) accepts it.

The request then runs through the SDK's own kernel (``serve_one``: params validation, the server's
middleware, ``Front.call_tool``; ``gateway/unspanned_kernel.py`` leaves out its OpenTelemetry span when
that records nothing, and ``gateway/plain_calls.py`` its second check of params already known to pass it)
with the same dispatch context the SDK builds, so the guard, the write-ahead audit, the conversation and
input-request rounds behave exactly as on the SDK path; the answer is written as the SDK writes it (compact
JSON, the error-code to HTTP-status table). Differences, by design: a
client that disconnects does not cancel the call (its outcome is audited either way), and a call that runs
past the SDK's 15 s SSE window is still answered as JSON (the Accept allows both).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from mcp.server._streamable_http_modern import _write
from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data
from mcp.shared.inbound import InboundModernRoute, classify_inbound_request
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY, JSONRPCError
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sentinel_mcp.app.param_header_check import ParamHeaderCheck
from sentinel_mcp.core.json_text import compact_encoder
from sentinel_mcp.core.media_type import CANONICAL
from sentinel_mcp.gateway.plain_calls import PlainCalls
from sentinel_mcp.app.one_exchange_context import OneExchangeContext
from sentinel_mcp.gateway.unspanned_kernel import serve_call

if TYPE_CHECKING:
    from sentinel_mcp.app.http_protocol import HeadHoldingTransport

MODERN = "2026-07-28"
MESSAGE_KEY = "sentinel.message"  # the parsed JSON-RPC message WireGuard leaves in the scope
HEAD_HOLDER_KEY = "sentinel.head_holder"  # the connection's HeadHoldingTransport (app/http_protocol.py)
# headers the SDK checks for duplicates (find_duplicated_routing_header): a repeated one goes to the SDK
ROUTING_HEADERS = frozenset((b"mcp-protocol-version", b"mcp-method", b"mcp-name"))
JSON_HEADERS = (b"content-type", b"application/json")
# the verdicts on the Accept values seen (a client sends the same one on every call): the first few short ones
_ACCEPTS: dict[bytes, bool] = {}
MAX_ACCEPTS_KEPT, MAX_KEPT_ACCEPT = 64, 256
# json.dumps(..., separators=(",", ":")), its encoder built once (json.dumps builds one per call)
_COMPACT = compact_encoder()  # its C encoder built once too (core/json_text.py)

# the server (the MCP front), its lifespan state and a tool's input schema as the caller (the ASGI scope) is
# shown it, once the runtime has started (None before)
SchemaOf = Callable[[str, Scope], Any]
Target = Callable[[], "tuple[Any, Any, SchemaOf] | None"]


class LeanCalls:
    """ASGI middleware: serve the common ``tools/call`` itself, pass everything else to ``app``."""

    def __init__(self, app: ASGIApp, *, target: Target) -> None:
        self.app = app
        self.target = target
        self.plain = PlainCalls()  # the verdicts on the envelopes its clients send
        self.param_headers = ParamHeaderCheck()  # the SDK's Mcp-Param-* check, its schema walk kept

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = scope.get(MESSAGE_KEY)
        target = self.target() if message is not None else None
        routing = _lean_request(scope, message) if target is not None else None
        if target is None or message is None or routing is None:
            return await self.app(scope, receive, send)
        # the ladder reads the routing headers only, each sent at most once here: given them as found (what
        # ``Headers.get`` would give, without its per-look-up lowering and scan of every header)
        verdict = classify_inbound_request(message, headers=routing)
        if not isinstance(verdict, InboundModernRoute):
            return await self.app(scope, receive, send)  # the SDK writes the rejection
        server, lifespan_state, schema_of = target
        headers = Headers(scope=scope)
        rid = message["id"]
        params = message["params"]
        name, arguments = params.get("name"), params.get("arguments")
        if arguments and isinstance(name, str) and isinstance(arguments, dict):
            # a tool may declare arguments mirrored in Mcp-Param-* headers (none were sent): the SDK's check,
            # on the schema the caller's tools/list shows (the SDK lists the whole catalog per call for it)
            schema = schema_of(name, scope)
            if schema is not None and self.param_headers.refusal(schema, arguments, headers) is not None:
                return await self.app(scope, receive, send)  # the SDK writes the rejection
        request = Request(scope, receive)
        dctx = OneExchangeContext(
            TransportContext(kind="streamable-http", can_send_request=False, headers=headers), rid,
            ServerMessageMetadata(request_context=request))
        connection = self.plain.connection(params)  # plain params: a kept envelope, no second check
        checked = connection is not None
        if connection is None:
            connection = Connection.from_envelope(verdict.protocol_version, verdict.client_info,
                                                  verdict.client_capabilities)
        try:
            result = await serve_call(server, dctx, params, connection=connection,
                                      lifespan_state=lifespan_state, checked=checked)
        except Exception as exc:  # noqa: BLE001 - mapped to the wire exactly as the SDK maps it
            error = JSONRPCError(jsonrpc="2.0", id=rid, error=modern_error_data(exc))
            return await _write(error, scope, receive, send)
        body = _COMPACT({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
        await _respond(send, 200, body, scope.get(HEAD_HOLDER_KEY))


def _lean_request(scope: Scope, message: Any) -> dict[str, str] | None:
    """The routing headers (``ROUTING_HEADERS``, each sent once: its lowercase name, its value as Starlette's
    ``Headers`` decodes it) when the lean path takes this request; None when it goes to the SDK."""
    if scope.get("path") != "/mcp" or scope.get("method") != "POST" or not isinstance(message, dict):
        return None
    if message.get("method") != "tools/call" or "id" not in message:
        return None
    rid = message["id"]
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or meta.get(PROTOCOL_VERSION_META_KEY) != MODERN:
        return None
    if "progressToken" in meta or LOG_LEVEL_META_KEY in meta:
        return None  # the SDK would stream notifications (SSE) for these
    content_type = accept = None
    routing: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        if key in ROUTING_HEADERS:
            name = key.decode("latin-1")
            if name in routing:
                return None
            routing[name] = value.decode("latin-1")
        elif key == b"mcp-session-id" or key.startswith(b"mcp-param-"):
            return None
        elif key == b"content-type":
            if content_type is not None:
                return None  # sent twice: the SDK reads the first; let it answer
            content_type = value
        elif key == b"accept":
            if accept is not None:
                return None
            accept = value
    if routing.get("mcp-protocol-version") != MODERN or content_type is None or accept is None:
        return None
    if content_type != CANONICAL:  # the one media type taken (WireGuard refused any other, wrote this one so)
        return None
    return routing if accepts_json_and_sse(accept) else None


def accepts_json_and_sse(accept: bytes) -> bool:
    """``_accepts_json_and_sse`` of the header's value; the verdicts on the first few short values are kept (a
    client sends the same Accept on every call). Both lean paths ask here."""
    verdict = _ACCEPTS.get(accept)
    if verdict is None:
        verdict = _accepts_json_and_sse(accept.decode("latin-1"))
        if len(accept) <= MAX_KEPT_ACCEPT and len(_ACCEPTS) < MAX_ACCEPTS_KEPT:
            _ACCEPTS[accept] = verdict
    return verdict


def _accepts_json_and_sse(accept: str) -> bool:
    """The SDK's Accept rule (``check_accept_headers``) for SSE mode: JSON and SSE both acceptable."""
    types = {t.strip().split(";")[0].strip().lower() for t in accept.split(",")}
    if "*/*" in types:
        return True
    takes_json = bool(types & {"application/json", "application/*"})
    return takes_json and bool(types & {"text/event-stream", "text/*"})


async def _respond(send: Send, status: int, body: bytes, holder: HeadHoldingTransport | None = None) -> None:
    # header order as Starlette's Response writes them: both paths answer byte for byte alike
    start: Message = {"type": "http.response.start", "status": status,
                      "headers": [(b"content-length", str(len(body)).encode()), JSON_HEADERS]}
    if holder is None:
        await send(start)
        await send({"type": "http.response.body", "body": body})
        return
    holder.body_follows = True  # the body is sent right after the head (http_protocol.py)
    try:
        await send(start)
        await send({"type": "http.response.body", "body": body})
    finally:
        holder.body_follows = False  # a head not written (a connection gone) leaves nothing behind

