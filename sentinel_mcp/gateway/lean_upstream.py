"""The lean upstream client: a ``tools/call`` to a 2026-07-28 streamable-HTTP upstream as one POST.

The SDK's client reads every answer as an event stream through per-request task groups and memory streams;
on a busy gateway that costs more CPU than the upstream spends on the call. For the common case (a
modern-era HTTP upstream, no progress wanted, no input round being answered) the call is one POST on a
kept-alive connection of this upstream's own ``httpx2`` client, stamped exactly as the SDK stamps it (its
``_meta`` envelope and ``Mcp-*`` headers), and a plain JSON answer is parsed once and validated as the SDK
validates it. Everything else goes through the SDK (``Upstream._call`` decides before anything is sent, so
a call is never sent twice). An event-stream answer to a lean call is still read here, bounded: its log
lines go to the caller, its one answer is the result.

The upstream is hostile: an answer larger than ``MAX_ANSWER_BYTES`` (or an event larger than
``MAX_EVENT_BYTES``), not JSON, not JSON-RPC 2.0, a batch, an answer to another id, or of a wrong content
type is an ``MCPError`` the caller turns into a clear error; the call's deadline (``Upstream._call``) bounds
a slow drip. Errors are the codes the SDK raises for the same faults, so the breaker and reconnect logic
treat both paths alike.
"""

from __future__ import annotations

import json
import logging
import os
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

import httpx2
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, InputRequiredResult, LoggingMessageNotificationParams
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from mcp_types import methods as sdk_methods

from sentinel_mcp.config import RemoteServer

log = logging.getLogger(__name__)

MAX_ANSWER_BYTES = 16 * 1024 * 1024  # a plain JSON answer
MAX_EVENT_BYTES = 1024 * 1024  # one event of an event-stream answer (the SDK's own limit)
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
PARSE_ERROR = -32700
MODERN = "2026-07-28"

LogSink = Callable[[LoggingMessageNotificationParams], Awaitable[None]]
ProgressSink = Callable[[float, float | None, str | None], Awaitable[None]]


class LeanCaller:
    """One upstream's lean ``tools/call`` path; lives as long as its SDK connection."""

    def __init__(self, url: str, http: httpx2.AsyncClient, client: Client) -> None:
        self.url = url
        self.http = http
        self.client = client
        self._next_id = 0

    def usable(self, client: Client | None) -> bool:
        """Still the connection this was made for, still on the modern era."""
        return client is self.client and client.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        meta: dict[str, Any] | None,
        on_log: LogSink,
        on_progress: ProgressSink,
    ) -> CallToolResult | InputRequiredResult:
        self._next_id += 1
        rid = self._next_id
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if meta:
            params["_meta"] = dict(meta)
        data: dict[str, Any] = {"method": "tools/call", "params": params}
        opts: dict[str, Any] = {}
        # the SDK's own stamp: the same envelope, log opt-in, Mcp-Method/Mcp-Name/Mcp-Param-* headers
        self.client.session._stamp(data, opts)  # type: ignore[arg-type]
        # as the SDK's dispatcher: progress is asked for under the request's own id
        params.setdefault("_meta", {})["progressToken"] = rid
        body = json.dumps({"jsonrpc": "2.0", "id": rid, **data}, separators=(",", ":"), ensure_ascii=False)
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            **opts.get("headers", {}),
        }
        try:
            async with self.http.stream("POST", self.url, content=body.encode(), headers=headers) as response:
                raw = await self._answer(response, rid, on_log, on_progress)
        except httpx2.TimeoutException as e:
            raise MCPError(REQUEST_TIMEOUT, f"Request timed out: {type(e).__name__}") from None
        except httpx2.TransportError as e:
            raise MCPError(CONNECTION_CLOSED, f"Connection closed: {type(e).__name__}: {e}") from None
        return _validated(raw)

    async def _answer(
        self, response: httpx2.Response, rid: int, on_log: LogSink, on_progress: ProgressSink
    ) -> dict[str, Any]:
        status = response.status_code
        ctype = response.headers.get("content-type", "").lower()
        if status == 202:
            raise MCPError(INVALID_REQUEST, "server answered a request with 202 Accepted")
        if 300 <= status < 400:
            raise MCPError(INVALID_REQUEST, f"server redirected the request ({status}); not followed")
        if status >= 400:
            if ctype.startswith("application/json"):
                try:
                    msg = json.loads(await _read_bounded(response, MAX_ANSWER_BYTES))
                    if isinstance(msg, dict) and isinstance(msg.get("error"), dict):
                        _raise_error(msg["error"])
                except (ValueError, UnicodeDecodeError):
                    pass
            if status == 404:
                raise MCPError(METHOD_NOT_FOUND, "Not Found")
            raise MCPError(INTERNAL_ERROR, "Server returned an error response")
        if ctype.startswith("application/json"):
            return _response_for(_parse(await _read_bounded(response, MAX_ANSWER_BYTES)), rid)
        if ctype.startswith("text/event-stream"):
            return await _from_event_stream(response, rid, on_log, on_progress)
        raise MCPError(INVALID_REQUEST, f"Unexpected content type: {ctype[:80]}")


@asynccontextmanager
async def lean_caller(target: Any, client: Client) -> AsyncIterator[LeanCaller | None]:
    """A lean caller for a connected modern streamable-HTTP upstream; None for every other kind."""
    if (
        os.environ.get("SENTINEL_LEAN_UPSTREAM", "on") == "off"  # every call through the SDK's client
        or not isinstance(target, RemoteServer)
        or target.kind != "streamable-http"
        or client.protocol_version not in MODERN_PROTOCOL_VERSIONS
    ):
        yield None
        return
    from sentinel_mcp.tls.client_context import httpx_verify

    http = httpx2.AsyncClient(
        headers=target.headers,
        # no pool timeout: a call waiting for a free connection is bounded by its own deadline instead
        timeout=httpx2.Timeout(target.connect_timeout, read=target.timeout, pool=None),
        verify=httpx_verify(target.tls if target.tls != "off" else None),
        follow_redirects=False,
        limits=httpx2.Limits(max_connections=64, max_keepalive_connections=32),
    )
    async with http:
        yield LeanCaller(target.url, http, client)


async def _read_bounded(response: httpx2.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise MCPError(INVALID_REQUEST, f"answer larger than {limit} bytes ({declared} declared)")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise MCPError(INVALID_REQUEST, f"answer larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(raw: bytes | str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise MCPError(PARSE_ERROR, f"Failed to parse JSON response: {type(e).__name__}") from None


def _response_for(msg: Any, rid: int) -> dict[str, Any]:
    """The result of JSON-RPC response ``msg`` to request ``rid``; raises on anything else."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        what = "a batch" if isinstance(msg, list) else "not a JSON-RPC 2.0 message"
        raise MCPError(PARSE_ERROR, f"Failed to parse JSON response: {what}")
    mid = msg.get("id")
    if type(mid) is not int or mid != rid:
        raise MCPError(PARSE_ERROR, f"Failed to parse JSON response: answer to id {str(mid)[:40]}, not {rid}")
    if "error" in msg:
        error = msg["error"]
        if not isinstance(error, dict):
            raise MCPError(PARSE_ERROR, "Failed to parse JSON response: its error is not an object")
        _raise_error(error)
    result = msg.get("result")
    if not isinstance(result, dict):
        raise MCPError(PARSE_ERROR, "Failed to parse JSON response: no result object")
    return result


def _raise_error(error: dict[str, Any]) -> None:
    code, message = error.get("code"), error.get("message")
    if type(code) is not int or not isinstance(message, str):
        raise MCPError(PARSE_ERROR, "Failed to parse JSON response: malformed error")
    raise MCPError(code, message[:2000], error.get("data"))


async def _from_event_stream(
    response: httpx2.Response, rid: int, on_log: LogSink, on_progress: ProgressSink
) -> dict[str, Any]:
    """Read events until the answer to ``rid``: log lines go to ``on_log``, progress under our token to
    ``on_progress`` (which also moves the call's deadline), other notifications are dropped, and a request
    from the upstream is ignored (the 2026 era forbids them mid-call)."""
    data: list[str] = []
    size = 0
    async for line in response.aiter_lines():
        if line:
            if line.startswith("data:"):
                part = line[5:].removeprefix(" ")
                size += len(part) + 1
                if size > MAX_EVENT_BYTES:
                    raise MCPError(INVALID_REQUEST, f"event larger than {MAX_EVENT_BYTES} bytes")
                data.append(part)
            continue
        if not data:
            continue
        msg = _parse("\n".join(data))
        data, size = [], 0
        if isinstance(msg, dict) and "method" in msg and "id" not in msg:
            method = msg.get("method")
            if method == "notifications/message":
                try:
                    params = LoggingMessageNotificationParams.model_validate(msg.get("params"))
                except ValueError:
                    log.info("lean upstream call: malformed log line dropped")
                    continue
                await on_log(params)
            elif method == "notifications/progress":
                await _progress(msg.get("params"), rid, on_progress)
            continue
        if isinstance(msg, dict) and "method" in msg:
            log.info("lean upstream call: upstream request %r mid-call ignored", str(msg.get("method"))[:60])
            continue
        return _response_for(msg, rid)
    raise MCPError(INTERNAL_ERROR, "the upstream's event stream ended without an answer")


async def _progress(params: Any, rid: int, on_progress: ProgressSink) -> None:
    if not isinstance(params, dict) or params.get("progressToken") != rid:
        return  # another call's, or malformed: as the SDK, dropped
    p, total, message = params.get("progress"), params.get("total"), params.get("message")
    if not isinstance(p, (int, float)) or not _number(p) or not (total is None or _number(total)):
        return
    await on_progress(
        float(p), None if total is None else float(total), message if isinstance(message, str) else None
    )


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def _validated(raw: dict[str, Any]) -> CallToolResult | InputRequiredResult:
    """As the SDK's ``send_request`` + ``call_tool`` validate a modern ``tools/call`` result."""
    ttl = raw.get("ttlMs")
    if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
        raw["ttlMs"] = 0
    try:
        sdk_methods.validate_server_result("tools/call", MODERN, raw)
        if raw.get("resultType") == "input_required":
            return InputRequiredResult.model_validate(raw, by_name=False)
        return CallToolResult.model_validate(raw, by_name=False)
    except KeyError:
        return CallToolResult.model_validate(raw, by_name=False)
    except ValueError as e:
        why = str(e)[:300]
        raise MCPError(PARSE_ERROR, f"upstream result is not a valid tools/call result: {why}") from None
