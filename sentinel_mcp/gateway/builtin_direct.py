"""Calling an in-process built-in's tool in the caller's task, without the in-memory MCP client/server pair.

A built-in is mounted through the SDK's in-memory transport: every call is framed as a JSON-RPC request, put
on a memory stream, picked up by the server's dispatcher task, answered on another stream and matched back
(issue 21: ~13 % of the gateway's event loop on a no-op built-in). For the tools a built-in declares never ask
their caller anything (``BuiltinTraits.direct_tools``), this dispatcher hands the ``tools/call`` straight to
the SDK's own request kernel (``ServerRunner.on_request``: the same surface validation, handler, middleware
and wire shaping as the in-memory server) and gives the result dict back to the client session, which parses
and checks it exactly as it parses an answer off the wire. Every other request, and every call of a tool not
declared, takes the in-memory path unchanged.

The session's ``call_tool`` is wrapped too, so a declared tool's call skips the client side's model round
trip as well (issue 21): its params are what the session would put on the wire (``_json_shaped``: the same
dict, the same copies; anything that is not plain JSON takes the session's own way), the kernel runs without
re-validating params it was just handed in that exact shape (``unspanned_kernel.serve_checked_call``), and
the result dict, which is already the negotiated version's surface dump, is parsed once by the session's own
result adapter and checked against the tool's output schema by the session, as ``ClientSession.call_tool``
does.

What the in-memory pair did and this keeps: the request's ``_meta`` (with a ``progressToken`` when the caller
wants progress), progress reports (straight to the caller's callback), request-scoped log lines (to the
upstream's log relay), the time limit (``opts["timeout"]``, as the JSON-RPC dispatcher's -32001), cancellation
(the handler runs in the caller's task, so cancelling the call cancels it), and the error shapes (``MCPError``
as is, a pydantic ``ValidationError`` as -32602, anything else as code 0 with its text, like the SDK's
dispatcher). A declared tool that asks anyway gets the SDK's ``NoBackChannelError`` (the 2026-07-28 rule), an
error, never a silent answer.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from itertools import count
from typing import Any

from mcp import Client
from mcp.server.connection import Connection
from mcp.server.runner import ServerRunner
from mcp.client.extension import UnexpectedClaimedResult
from mcp.client.session import _input_required_unexpected
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.transport_context import TransportContext
from mcp.types import (
    CallToolResult,
    ErrorData,
    Implementation,
    InputRequiredResult,
    LoggingMessageNotificationParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp import __version__
from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.gateway.lazy_cancel_context import LazyCancelContext
from sentinel_mcp.gateway.step_deadline import StepDeadline
from sentinel_mcp.gateway.unspanned_kernel import UnspannedRunner, serve_checked_call, span_records_nothing

log = logging.getLogger(__name__)

REQUEST_TIMEOUT = -32001
_TRANSPORT = TransportContext(kind="in-process", can_send_request=False)


class _NotPlain(GatewayError):
    """A value that is not plain JSON: the call takes the session's own way."""


def _json_shaped(value: Any, depth: int = 0) -> Any:
    """A copy of a JSON value as the session's ``model_dump(mode="json")`` puts it on the wire (tuples become
    lists; every container is new, so the tool never holds the gateway's own objects). Anything else (a
    non-finite number, a non-string key, another type, more than 64 levels) raises ``_NotPlain``."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _NotPlain
        return value
    if depth > 64:
        raise _NotPlain
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _NotPlain
            out[k] = _json_shaped(v, depth + 1)
        return out
    if kind is list or kind is tuple:
        return [_json_shaped(v, depth + 1) for v in value]
    raise _NotPlain


def lowlevel(server: Any) -> Any:
    """The low-level ``Server`` of an ``MCPServer`` (what the in-memory transport runs too)."""
    inner = getattr(server, "_lowlevel_server", None)
    return inner if inner is not None else server


class _CallContext(LazyCancelContext):
    """A ``DispatchContext`` for one direct call: progress and log lines go to the caller; no back channel."""

    __slots__ = ("request_id", "on_progress", "on_log")
    transport = _TRANSPORT
    message_metadata = None

    def __init__(
        self,
        request_id: int,
        on_progress: Callable[[float, float | None, str | None], Awaitable[None]] | None,
        on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]],
    ) -> None:
        self.request_id = request_id
        self.on_progress = on_progress
        self.on_log = on_log
        self._cancel = None

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        if method == "notifications/message" and params is not None:
            try:
                await self.on_log(LoggingMessageNotificationParams.model_validate(dict(params)))
            except Exception:  # noqa: BLE001 - a log line never fails the call (as on the wire)
                log.debug("dropped a log line of a direct call", exc_info=True)
        elif method == "notifications/progress" and params is not None:
            await self.progress(params.get("progress", 0.0), params.get("total"), params.get("message"))

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        if self.on_progress is None:
            return
        try:
            await self.on_progress(progress, total, message)
        except Exception:  # noqa: BLE001 - same boundary as the SDK's shielded progress callback
            log.exception("progress callback raised")


class DirectDispatcher:
    """Wraps a connected in-memory session's dispatcher; ``tools/call`` of a declared tool runs in-task."""

    def __init__(
        self,
        inner: Any,
        server: Any,
        tools: frozenset[str],
        connection: Connection,
        lifespan_state: Any,
        on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]],
    ) -> None:
        self._inner = inner
        self._server = lowlevel(server)
        self._runner = ServerRunner(self._server, connection, lifespan_state)
        # the same kernel without the server's OpenTelemetry span, for calls where it would record nothing
        self._unspanned = UnspannedRunner(self._server, connection, lifespan_state)
        self.tools = tools
        self._on_log = on_log
        self._ids = count(1)
        self.direct_calls = 0  # how many calls took this path (tests and the benchmark read it)
        self._session: Any = None  # the session whose call_tool this serves (``direct_path`` sets it)
        self._sdk_call_tool: Any = None

    def __getattr__(self, name: str) -> Any:  # everything else is the in-memory session's dispatcher
        return getattr(self._inner, name)

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        if method != "tools/call" or params is None or params.get("name") not in self.tools:
            return await self._inner.send_raw_request(method, params, opts)  # type: ignore[no-any-return]
        return await self._run(dict(params), opts or {}, checked=False)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: Any = None,
        *,
        input_responses: Any = None,
        request_state: str | None = None,
        meta: Any = None,
        allow_input_required: bool = False,
        allow_claimed: bool = False,
        within: StepDeadline | None = None,
    ) -> Any:
        """``ClientSession.call_tool`` for a declared tool: the same result, or the same exception.
        ``within``: the deadline this task already runs under (``upstream_calls``), which makes the read
        timeout's own timer needless when it always ends the call first."""
        session = self._session
        params = None
        if name in self.tools and input_responses is None and request_state is None:
            try:
                params = self._wire_params(name, arguments, meta)
            except _NotPlain:
                params = None
        if params is None:
            return await self._sdk_call_tool(
                name, arguments, read_timeout_seconds, progress_callback, input_responses=input_responses,
                request_state=request_state, meta=meta, allow_input_required=allow_input_required,
                allow_claimed=allow_claimed)
        opts: CallOptions = {}
        timeout = read_timeout_seconds if read_timeout_seconds is not None else (
            session._session_read_timeout_seconds)
        if timeout is not None:
            opts["timeout"] = timeout
        if progress_callback is not None:
            opts["on_progress"] = progress_callback
        raw = await self._run(params, opts, checked=True, within=within)
        if type(raw) is CallToolResult:
            result = raw  # the handler's own, equal to its dump validated (serve_checked_call's ``model``)
        else:
            # ``raw`` is the kernel's surface dump for the negotiated version: what the session's
            # ``validate_server_result`` and its later-revision sieve would check and keep is all of it
            result = session._call_tool_adapter.validate_python(raw, by_name=False)
        if isinstance(result, CallToolResult) and not result.is_error:
            await session.validate_tool_result(name, result)
        if isinstance(result, InputRequiredResult) and not allow_input_required:
            raise _input_required_unexpected("call_tool")
        if not isinstance(result, CallToolResult | InputRequiredResult) and not allow_claimed:
            raise UnexpectedClaimedResult(result)
        return result

    @staticmethod
    def _wire_params(name: str, arguments: Any, meta: Any) -> dict[str, Any]:
        """What ``CallToolRequest(params=CallToolRequestParams(...)).model_dump(by_alias=True, mode="json",
        exclude_none=True)["params"]`` holds (``_NotPlain`` when that is not sure)."""
        if type(name) is not str:
            raise _NotPlain
        out: dict[str, Any] = {}
        if meta is not None:
            if type(meta) is not dict:
                raise _NotPlain
            if "progressToken" in meta:
                raise _NotPlain  # the dispatcher's own; a caller's would be typed by the model
            # a text is its own wire form (most of a call's meta: ``_json_shaped`` would return it as it is)
            out["_meta"] = {
                k: v if type(v) is str else _json_shaped(v) for k, v in meta.items() if v is not None}
        out["name"] = name
        if arguments is not None:
            if type(arguments) is not dict:
                raise _NotPlain
            out["arguments"] = _json_shaped(arguments)
        return out

    def serves(self, session: Any, tool: str) -> bool:
        """Whether ``session.call_tool`` of ``tool`` is this dispatcher's direct call (the session's
        ``call_tool`` still this one's: nothing wrapped it since)."""
        return session is self._session and tool in self.tools and session.call_tool == self.call_tool

    async def _run(
        self, out: dict[str, Any], opts: CallOptions, *, checked: bool, within: StepDeadline | None = None
    ) -> Any:
        """The kernel on ``out`` (``checked``: params in the session's own wire shape, built here) in the
        caller's task, under the time limit, errors shaped as the JSON-RPC dispatcher shapes them. The wire
        dict, or (``checked``) the handler's plain ``CallToolResult`` that the dict would validate back to.
        ``within``: an enclosing deadline of this task that always ends the call before the limit would: then
        the limit arms nothing (the enclosing one's cancellation passes through unchanged, as it did through
        a limit that had not expired)."""
        request_id = next(self._ids)
        on_progress = opts.get("on_progress")
        if on_progress is not None:  # what the JSON-RPC dispatcher stamps: the server reports against it
            out["_meta"] = {**(out.get("_meta") or {}), "progressToken": request_id}
        dctx = _CallContext(request_id, on_progress, self._on_log)
        self.direct_calls += 1
        limit = opts.get("timeout")
        # asyncio's own timeout (the gateway runs on asyncio only; an anyio scope asks which library runs, per
        # call), armed only if the handler waits (step_deadline.py); none at all without a limit. A
        # cancellation from outside stays a cancellation
        deadline = None
        if limit is not None and (within is None or not within.bounds(limit)):
            deadline = StepDeadline(running_loop().time() + limit)
        try:
            try:
                if deadline is None:
                    return await self._serve(dctx, out, checked)
                return await deadline.run(lambda: self._serve(dctx, out, checked))
            except TimeoutError:
                if deadline is None or not deadline.expired:
                    raise  # the handler's own: shaped below
                raise MCPError(
                    code=REQUEST_TIMEOUT,
                    message=f"Timed out while waiting for response to tools/call. Waited {limit} seconds.",
                ) from None
        except MCPError:
            raise
        except Exception as e:  # noqa: BLE001 - shaped as the SDK's dispatcher shapes a handler's failure
            error = handler_exception_to_error_data(e)
            if error is None:
                log.error("built-in handler for tools/call raised", exc_info=e)
                error = ErrorData(code=0, message=str(e))
            raise MCPError.from_error_data(error) from None

    async def _serve(self, dctx: _CallContext, out: dict[str, Any], checked: bool) -> Any:
        quiet = span_records_nothing(out.get("_meta") or {})
        if quiet and checked:  # params built by _wire_params: the kernel's surface check holds
            return await serve_checked_call(self._unspanned, dctx, out, model=True)
        return await (self._unspanned if quiet else self._runner).on_request(dctx, "tools/call", out)


@asynccontextmanager
async def direct_path(
    client: Client,
    server: Any,
    tools: frozenset[str],
    on_log: Callable[[LoggingMessageNotificationParams], Awaitable[None]],
) -> AsyncIterator[DirectDispatcher | None]:
    """While connected: ``tools/call`` of ``tools`` bypasses the in-memory pair (nothing declared, or a
    2026-07-28 connection: no change).

    The server's lifespan is entered once more for the direct kernel (the in-memory server entered its own);
    the connection the kernel sees carries the negotiated version, the gateway's client info and the
    capabilities the session advertised, and no standalone channel (a declared tool sends nothing outside its
    call's own progress and log lines)."""
    version = client.protocol_version or "2025-11-25"
    # a 2026-07-28 connection to an in-process server is already the SDK's own in-task peer pair (no streams)
    if not tools or version in MODERN_PROTOCOL_VERSIONS:
        yield None
        return
    session = client.session
    connection = Connection.from_envelope(
        version,
        Implementation(name="sentinel-mcp", version=__version__).model_dump(by_alias=True, exclude_none=True),
        session._build_capabilities(version).model_dump(by_alias=True, exclude_none=True),
    )
    inner = lowlevel(server)
    async with inner.lifespan(inner) as lifespan_state:
        wrapped = DirectDispatcher(session._dispatcher, server, tools, connection, lifespan_state, on_log)
        session._dispatcher = wrapped  # type: ignore[assignment]  # the session's one way to its server
        # and its call_tool, for the declared tools (an attribute of this session object, not of the class)
        wrapped._session, wrapped._sdk_call_tool = session, session.call_tool
        session.call_tool = wrapped.call_tool  # type: ignore[method-assign]
        try:
            yield wrapped
        finally:
            session._dispatcher = wrapped._inner
            del session.call_tool  # the class's method again
