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

import weakref
from functools import partial
from typing import Any, Mapping

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.connection import Connection
from mcp.server.runner import CallNext, ServerRunner, _apply_middleware, aclose_shielded, serve_one
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from mcp.server.runner import _dump_result, _extract_meta
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND, SERVER_INFO_META_KEY, ErrorData
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from mcp_types import methods as _methods

from sentinel_mcp.gateway.plain_tool_result import hands_on, plain_tool_result, same_after_round_trip
from sentinel_mcp.gateway.telemetry import ShownSpanMiddleware, tracing_off

# _meta keys that carry no trace context: the 2026 envelope, the progress token the gateway's client session
# stamps on every call to a built-in, and the gateway's own keys on that call (no propagator reads a name
# with a "/"); any other key (traceparent, tracestate, baggage, b3...) keeps the span
QUIET_META_KEYS = frozenset(
    (PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY, "progressToken"))
GATEWAY_PREFIX = "sentinel/"
_SPANS = frozenset((OpenTelemetryMiddleware, ShownSpanMiddleware))


class UnspannedRunner(ServerRunner[Any]):
    """The SDK's runner with the server's middleware chain minus the SDK's span (used only when the span would
    record nothing); every other middleware (a built-in's request-state boundary) runs, in its order. Its
    answers go straight to a JSON encoder (the lean path; the built-ins' direct calls, of the handshake era,
    are never stamped), so the 2026 answers' ``serverInfo`` stamp is one copy per server rather than a deep
    copy per answer (``_stamp_server_info``)."""

    def _stamp_server_info(self, version: str, result: dict[str, Any]) -> dict[str, Any]:
        # the SDK's rule, word for word (ServerRunner._stamp_server_info), with the stamp copied once per
        # server: nobody holds these answers to change them (they are encoded at once)
        if version not in MODERN_PROTOCOL_VERSIONS:
            return result
        raw_meta = result.get("_meta")
        if raw_meta is None:
            result["_meta"] = {SERVER_INFO_META_KEY: _stamp_of(self.server)}
        elif isinstance(raw_meta, dict):
            if raw_meta.get(SERVER_INFO_META_KEY) is None:
                result["_meta"] = {**raw_meta, SERVER_INFO_META_KEY: _stamp_of(self.server)}
        return result

    def _serialize(self, method: str, version: str, result: Any) -> dict[str, Any]:
        # a plain tools/call result shaped without the sieve's two model passes (plain_tool_result.py), the
        # same dict; anything else by the SDK's own (tools/call takes no cache hint: Server refuses one)
        if method == "tools/call":
            plain = plain_tool_result(result, version)
            if plain is not None:
                return self._stamp_server_info(version, plain)
        return super()._serialize(method, version, result)

    def _compose_server_middleware(self, inner: CallNext) -> CallNext:
        call = inner
        for middleware in reversed(self.server.middleware):
            # the SDK's span, or the front's shown one; told by type (an isinstance test of the SDK's class
            # goes through typing's protocol check, per middleware per call)
            if type(middleware) not in _SPANS:
                call = partial(_apply_middleware, middleware, call)
        return call


_STAMPS: "weakref.WeakKeyDictionary[Any, dict[str, Any]]" = weakref.WeakKeyDictionary()


def _stamp_of(server: Any) -> dict[str, Any]:
    """``server.server_info_stamp`` (a fresh deep copy of the server's identity), made once per server."""
    stamp = _STAMPS.get(server)
    if stamp is None:
        stamp = _STAMPS[server] = server.server_info_stamp
    return stamp


def span_records_nothing(meta: Mapping[str, Any]) -> bool:
    # the 2026 envelope alone (a client's usual _meta) is told in one set test, without a step per key; any
    # other by a plain loop (a generator under ``all`` was a resumption a key, on every built-in call)
    if not tracing_off():
        return False
    if QUIET_META_KEYS.issuperset(meta):
        return True
    for key in meta:
        if key not in QUIET_META_KEYS and not key.startswith(GATEWAY_PREFIX):
            return False
    return True


def request_meta(params: Mapping[str, Any] | None) -> Any:
    """``_extract_meta(params)``, the kernel's ``_meta`` as ``RequestParams`` validates it, without the model
    for the common shape (a built-in's direct call: ``progressToken``, an int or a string, first, then the
    gateway's keys): the token renamed ``progress_token``, every other value the same object, in order. Any
    other shape (a token of another type, a ``progress_token`` key, which validation drops, a key not a
    string, ``_meta`` not a dict) is left to the SDK's own."""
    meta = params.get("_meta", _MISSING) if type(params) is dict else _MISSING
    if type(meta) is not dict:
        return _extract_meta(params) if meta is not None else None
    token = meta.get("progressToken", _MISSING)
    kind = type(token)
    if (kind is not int and kind is not str and token is not _MISSING) or "progress_token" in meta:
        return _extract_meta(params)
    out: dict[str, Any] = {} if token is _MISSING else {"progress_token": token}
    for key, value in meta.items():
        if type(key) is not str:
            return _extract_meta(params)
        if key != "progressToken":
            out[key] = value
    return out


_MISSING: Any = object()
_HANDED: Any = object()  # inner's answer when it hands the handler's model on (no middleware sees it)


async def serve_checked_call(
    runner: ServerRunner[Any], dctx: Any, params: dict[str, Any], meta: Any = None, *, model: bool = False
) -> Any:
    """``runner.on_request(dctx, "tools/call", params)`` for params already known to pass the kernel's surface
    validation for the connection's version (its caller proved it: ``plain_call.PlainCalls``, the built-ins'
    ``builtin_direct._wire_params``), which is therefore not run again. Everything else is the kernel's own
    ``_on_request``, in its order: the context, the server's middleware as the runner composes it (params a
    middleware replaced are validated as the kernel validates them), the handler's params model, the handler,
    the result's shaping for the wire. The same result or the same exception. ``meta``: what the kernel's
    ``_extract_meta(params)`` gives, when the caller knows it already (plain params: a copy of ``_meta``).
    ``model`` (the built-ins' direct path, which would validate the dict again): the handler's own
    ``CallToolResult`` instead, when it is plain, no middleware replaced its dict, and validating that dict
    would give it back field for field (``plain_tool_result.same_after_round_trip``); the dict's pass is
    still made (what it refuses is refused)."""
    version = runner.connection.protocol_version
    server = runner.server
    kept: list[Any] = []  # [the handler's model, its wire dict] when ``model`` may hand the model on

    async def inner(ctx: Any) -> Any:
        method, given = ctx.method, ctx.params
        if method in _methods.SPEC_CLIENT_METHODS and not (method == "tools/call" and given is params):
            try:
                _methods.validate_client_request(method, version, given)
            except KeyError:
                raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=method) from None
        entry = server.get_request_handler(method)
        if entry is None:
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=method)
        if not runner.connection.initialize_accepted:
            raise MCPError(code=INVALID_PARAMS, message="Invalid request parameters", data="")
        typed = entry.params_type.model_validate({} if given is None else given, by_name=False)
        result = await entry.handler(ctx, typed)
        if isinstance(result, ErrorData):
            raise MCPError.from_error_data(result)
        if model and method == "tools/call" and version not in MODERN_PROTOCOL_VERSIONS and isinstance(
                runner, UnspannedRunner):
            # unstamped (a handshake-era connection): the plain dict is the wire dict. With no middleware to
            # see it, a model the dict would validate back to is handed on without dumping it at all
            if bare and hands_on(result, version):
                kept[:] = (result, _HANDED)
                return _HANDED
            plain = plain_tool_result(result, version)
            if plain is not None:
                if same_after_round_trip(result, plain):
                    kept[:] = (result, plain)
                return plain
        return runner._serialize(method, version, result)

    if meta is None:
        meta = request_meta(params)
    ctx = runner._make_context(dctx, "tools/call", params, meta, version)
    chain = runner._compose_server_middleware(inner)
    bare = chain is inner  # no middleware: what inner returns is ``out``
    out = await chain(ctx)
    if kept and kept[1] is out:
        return kept[0]
    return _dump_result(out)


async def serve_call(
    server: Any, dctx: Any, params: Mapping[str, Any], *, connection: Connection, lifespan_state: Any,
    checked: bool = False,
) -> dict[str, Any]:
    """``serve_one(server, dctx, "tools/call", params, ...)``, the same result or the same exception.
    ``checked``: the params are known to pass the kernel's surface check (``plain_calls.PlainCalls``)."""
    if not span_records_nothing(params.get("_meta") or {}):
        return await serve_one(server, dctx, "tools/call", params, connection=connection,
                               lifespan_state=lifespan_state)
    runner = UnspannedRunner(server, connection, lifespan_state)
    try:
        if checked and type(params) is dict:
            # plain params: their _meta validates to an equal copy of itself (tests/gateway/test_plain_calls)
            return await serve_checked_call(runner, dctx, params, dict(params["_meta"]))
        return await runner.on_request(dctx, "tools/call", params)
    finally:
        # CPython's AsyncExitStack keeps its callbacks here; nothing entered means nothing to unwind
        if connection.exit_stack._exit_callbacks:  # type: ignore[attr-defined]
            await aclose_shielded(connection)
