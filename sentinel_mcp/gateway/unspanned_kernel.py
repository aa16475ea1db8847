"""The SDK's request kernel minus what records nothing: the lean HTTP path's ``serve_one`` and the direct
calls into in-process built-ins (``builtin_direct.py``).

``serve_one`` wraps every call in the server's middleware, the outermost being the SDK's OpenTelemetry span,
and unwinds the per-call connection's exit stack under a shielded, time-bounded cancel scope. With no tracer
provider installed and no trace context in the call's ``_meta`` the span is a no-op that still costs a few
percent of the event loop per call (attribute dict, context attach and detach); an exit stack nothing
entered has nothing to unwind. Everything else is the SDK's own code, unchanged and in the same order:
surface validation of the params for the era, the handler's params model, ``Front.call_tool``, the result's
shaping for the wire. So answers are the same bytes either way (``tests/gateway/test_lean_calls.py``,
``tests/gateway/test_builtin_direct.py``).

The span is kept, through ``serve_one`` itself, whenever it could matter: a tracer provider is installed
(``sentinel.telemetry``), or ``_meta`` carries any key
beyond the three of the 2026 envelope, a progress token and the gateway's ``sentinel/`` keys (a
``traceparent`` would make the no-op span current for what follows).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Mapping

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.connection import Connection
from mcp.server.runner import CallNext, ServerRunner, _apply_middleware, aclose_shielded, serve_one
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from sentinel_mcp.gateway.telemetry import tracing_off

# _meta keys that carry no trace context: the 2026 envelope, the progress token the gateway's client session
# stamps on every call to a built-in, and the gateway's own keys on that call (no propagator reads a name
# with a "/"); any other key (traceparent, tracestate, baggage, b3...) keeps the span
QUIET_META_KEYS = frozenset(
    (PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY, "progressToken"))
GATEWAY_PREFIX = "sentinel/"


class UnspannedRunner(ServerRunner[Any]):
    """The SDK's runner with the server's middleware chain minus the SDK's span (used only when the span would
    record nothing); every other middleware (a built-in's request-state boundary) runs, in its order."""

    def _compose_server_middleware(self, inner: CallNext) -> CallNext:
        call = inner
        for middleware in reversed(self.server.middleware):
            if type(middleware) is not OpenTelemetryMiddleware:
                call = partial(_apply_middleware, middleware, call)
        return call


def span_records_nothing(meta: Mapping[str, Any]) -> bool:
    return (
        tracing_off()
        and all(key in QUIET_META_KEYS or key.startswith(GATEWAY_PREFIX) for key in meta)
    )


async def serve_call(
    server: Any, dctx: Any, params: Mapping[str, Any], *, connection: Connection, lifespan_state: Any
) -> dict[str, Any]:
    """``serve_one(server, dctx, "tools/call", params, ...)``, the same result or the same exception."""
    if not span_records_nothing(params.get("_meta") or {}):
        return await serve_one(server, dctx, "tools/call", params, connection=connection,
                               lifespan_state=lifespan_state)
    runner = UnspannedRunner(server, connection, lifespan_state)
    try:
        return await runner.on_request(dctx, "tools/call", params)
    finally:
        # CPython's AsyncExitStack keeps its callbacks here; nothing entered means nothing to unwind
        if connection.exit_stack._exit_callbacks:  # type: ignore[attr-defined]
            await aclose_shielded(connection)
