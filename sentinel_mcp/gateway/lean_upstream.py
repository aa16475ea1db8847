"""The lean upstream client: a ``tools/call`` to a streamable-HTTP upstream as one POST, in either era.

The SDK's client reads every answer as an event stream through per-request task groups and memory streams
(and, on the handshake era, closes the connection after each event-stream answer); on a busy gateway that
cost more CPU than the upstream spends on the call. Here a call is one POST on a kept-alive connection of
this upstream's own pool (``lean_http``), stamped exactly as the SDK stamps it (its ``_meta`` envelope on
2026-07-28; ``Mcp-Session-Id`` and ``MCP-Protocol-Version`` on the handshake era; ``Mcp-*`` headers), and
its answer is validated as the SDK validates it. Everything else goes through the SDK (``Upstream._call``
decides before anything is sent, so a call is never sent twice): input rounds, stdio, the SSE transport,
every other method.

A JSON answer is parsed once. An event-stream answer is read here, bounded: log lines go to the caller,
progress under the call's token moves its deadline, the upstream's requests on the call's own stream
(elicitation, sampling, roots, ping: handshake era only) are answered through the SDK session's own
callback table in the calling task, so they reach exactly the client whose call it is, and their answers are
POSTed back on the session; other notifications go to the upstream's message handler. A lean call that is
cancelled or times out tells the upstream: on the handshake era with ``notifications/cancelled`` (as the
SDK does), on 2026-07-28 by closing its connection (the era's signal).

The upstream is hostile: an answer larger than ``MAX_ANSWER_BYTES`` (or an event larger than
``MAX_EVENT_BYTES``), not JSON, not JSON-RPC 2.0, a batch, an answer to another id, or of a wrong content
type is an ``MCPError`` the caller turns into a clear error; the call's deadline (``Upstream._call``) bounds
a slow drip. Errors are the codes the SDK raises for the same faults, so the breaker and reconnect logic
treat both paths alike.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Callable

from mcp import Client
from mcp.client.session import _later_revision_fields
from mcp.client.session import _CallToolResultAdapter as _CORE_CALL_TOOL_ADAPTER
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.types import (
    CallToolResult,
    CancelledNotification,
    InputRequiredResult,
    LoggingMessageNotification,
    LoggingMessageNotificationParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from mcp_types import methods as sdk_methods

from sentinel_mcp.config import RemoteServer
from sentinel_mcp.core.json_text import compact_encoder
from sentinel_mcp.gateway.plain_upstream_result import (
    holds_lone_surrogate,
    plain_call_result,
    surrogate_free,
)
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.paced_reading import progress_of
from sentinel_mcp.gateway.result_shape import check_shape
from sentinel_mcp.gateway.unfit_notices import read
from sentinel_mcp.gateway.lean_stream_requests import StreamRequests
from sentinel_mcp.gateway.lean_event_stream import INVALID_REQUEST as INVALID_REQUEST
from sentinel_mcp.gateway.lean_event_stream import MAX_EVENT_BYTES as MAX_EVENT_BYTES
from sentinel_mcp.gateway.lean_event_stream import read_bounded, stream_events
from sentinel_mcp.gateway.lean_http import HeaderRefused, HttpAnswer, HttpFault, HttpPool, pool_for
from sentinel_mcp.gateway.upstream_cookies import cookie_header, keep_cookies, lean_jar

log = logging.getLogger(__name__)

MAX_ANSWER_BYTES = 16 * 1024 * 1024  # a plain JSON answer
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603
PARSE_ERROR = -32700
# json.dumps(..., separators=(",", ":"), ensure_ascii=False), its encoder built once (core/json_text.py): the
# same text, without a new encoder per request
_BODY = compact_encoder(ensure_ascii=False)
# handshake-era lean calls share the upstream's session with the SDK client, whose request ids count from 0:
# the server keys each request's stream by its id, so ours live far above the SDK's
HANDSHAKE_IDS = 1 << 40
CANCEL_SECONDS = 5.0  # the courtesy cancel's own bound
MAX_RESUMES = 2  # failed attempts in a row to resume an event stream (the SDK's MAX_RECONNECTION_ATTEMPTS)
RESUME_DELAY_MS = 1000  # before resuming, when the server said no ``retry`` (the SDK's default)

LogSink = Callable[[LoggingMessageNotificationParams], Awaitable[None]]
ProgressSink = Callable[[float, float | None, str | None], Awaitable[None]]
NoticeSink = Callable[[Any], Awaitable[None]]  # a parsed server notification (list changes, updates...)


@dataclass
class HttpSession:
    """The ``Mcp-Session-Id`` the upstream gave the SDK client's handshake (noted from its answers), and
    whether the upstream has since answered a request on it with 404: the session is gone (it restarted or
    ended it) and, as the spec says, the client must start a new one."""

    session_id: str | None = None
    gone: bool = False
    cookies: Any = None  # the SDK client's jar (``httpx2.Cookies``), shared by the lean calls
    # another session id the upstream answered under: every answer since is refused (whose session's state
    # it holds is unknown, another client's maybe), the session gone and the upstream reconnected
    other: str | None = None

    def answered_under(self, sid: str | None) -> None:
        """An answer's ``Mcp-Session-Id``: the first names the session; another one after it ends it."""
        if not sid:
            return
        if self.session_id is None:
            self.session_id = sid
        elif sid != self.session_id and self.other is None:
            self.other, self.gone = sid, True


@dataclass
class _Resume:
    """Where an event stream stopped: its last event id and the server's reconnection delay (ms)."""

    last_id: str | None = None
    retry: int | None = None


class LeanCaller(StreamRequests):
    """One upstream's lean ``tools/call`` path; lives as long as its SDK connection."""

    own_stream = True  # what the upstream asks mid-call comes on the call's own stream: calls may overlap

    def __init__(self, pool: HttpPool, client: Client, session: HttpSession,
                 max_answer: int = MAX_ANSWER_BYTES) -> None:
        self.pool = pool
        self.max_answer = max_answer  # the server's ``max_result_bytes`` (``answer_limit``)
        self.client = client
        self.session = session
        self.era = client.protocol_version or ""
        self.modern = self.era in MODERN_PROTOCOL_VERSIONS
        self._next_id = 0 if self.modern else HANDSHAKE_IDS
        self._cancels: set[asyncio.Task[None]] = set()
        self.url = ""  # where the pool posts, and the connection's cookie jar (both set by lean_caller)
        self.jar: Any = None
        self.budget: NoticeBudget | None = None  # its upstream's notices to nobody (pauses a call's stream)
        # a progress notice that is not the call's own, by its token: counted and charged by the upstream
        self.stray: Callable[[Any], None] | None = None
        # a notice no client can take, by why and its method: counted and charged by the upstream
        self.unfit: Callable[[str, Any], None] | None = None

    def usable(self, client: Client | None) -> bool:
        """Still the connection this was made for, still on its era."""
        return client is self.client and client.protocol_version == self.era

    def _headers(self, opts: dict[str, Any]) -> dict[str, str]:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
                   **opts.get("headers", {})}
        sid = self.session.session_id
        if not self.modern and sid:
            headers["mcp-session-id"] = sid
        cookie = cookie_header(self.jar, self.url)
        if cookie:
            headers["cookie"] = cookie
        return headers

    def _kept(self, response: HttpAnswer) -> HttpAnswer:
        """``response``, its cookies stored in the connection's jar first (as the SDK's client does), the
        session it says it answers under noted (``HttpSession.answered_under``)."""
        keep_cookies(self.jar, self.url, response.set_cookies)
        if not self.modern:
            self.session.answered_under(response.headers.get("mcp-session-id"))
        return response

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        meta: dict[str, Any] | None,
        on_log: LogSink,
        on_progress: ProgressSink,
        on_notice: NoticeSink,
    ) -> CallToolResult | InputRequiredResult:
        self._next_id += 1
        rid = self._next_id
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if meta:
            params["_meta"] = dict(meta)
        data: dict[str, Any] = {"method": "tools/call", "params": params}
        opts: dict[str, Any] = {}
        # the SDK's own stamp: the era's envelope, log opt-in and headers (Mcp-Method, Mcp-Name, Mcp-Param-*)
        live_session(self.client)._stamp(data, opts)
        # as the SDK's dispatcher: progress is asked for under the request's own id
        params.setdefault("_meta", {})["progressToken"] = rid
        body = _BODY({"jsonrpc": "2.0", "id": rid, **data})
        answered = False
        try:
            async with self.pool.request("POST", body.encode(), self._headers(opts)) as response:
                raw, utf8_texts = await self._answer(self._kept(response), rid, on_log, on_progress,
                                                     on_notice)
                answered = True
        except HeaderRefused as e:
            answered = True  # nothing was sent: nothing to cancel
            raise MCPError(INVALID_REQUEST, str(e)) from None
        except HttpFault as e:
            raise MCPError(CONNECTION_CLOSED, f"Connection closed: {e}") from None
        finally:
            if not answered and not self.modern:
                self._cancel_later(rid)
        return validated_result(self.client, self.era, raw, utf8_texts, bound=True)  # shape bounds first

    def _cancel_later(self, rid: int) -> None:
        """The handshake era's courtesy cancel, sent beside whatever ends the call (never delaying it)."""
        task = asyncio.get_running_loop().create_task(self._send_cancel(rid))
        self._cancels.add(task)
        task.add_done_callback(self._cancels.discard)

    async def _send_cancel(self, rid: int) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid, "reason": "caller cancelled"}}
        await self._post_quietly(note, "courtesy cancel")

    async def _post_quietly(self, message: dict[str, Any], what: str) -> None:
        """A notification or an answer to the upstream's request: 202 expected, nothing to read."""
        data: dict[str, Any] = {"method": message.get("method", "")}
        opts: dict[str, Any] = {}
        try:
            live_session(self.client)._stamp(data, opts)
            async with asyncio.timeout(CANCEL_SECONDS):
                body = _BODY(message).encode()
                async with self.pool.request("POST", body, self._headers(opts)) as response:
                    self._kept(response)
                    async for _ in response.body():
                        pass
        except (HttpFault, TimeoutError, MCPError) as e:  # MCPError: its connection closed (live_session)
            log.info("lean upstream call: %s not delivered: %s", what, e)

    async def _session_kept(self) -> None:
        """After a handshake-era stream ended without its answer: whether the upstream still holds the
        session, asked by a ping on it. An upstream restarted (its sessions forgotten: 404) or gone (no
        connection) is said so, and reconnected at once (``Upstream._call``), not left for the next call to
        meet; one still holding it leaves the call the upstream's own error."""
        if self.modern or not self.session.session_id:
            return
        self._next_id += 1
        body = _BODY({"jsonrpc": "2.0", "id": self._next_id, "method": "ping"}).encode()
        try:
            async with asyncio.timeout(CANCEL_SECONDS):
                async with self.pool.request("POST", body, self._headers({})) as response:
                    self._kept(response)
                    async for _ in response.body():
                        pass
                    status = response.status
        except TimeoutError:
            return  # slow, not gone: the health check will tell
        except HttpFault:
            why = "Connection closed (the upstream dropped the call and answers no more)"
            raise MCPError(CONNECTION_CLOSED, why) from None
        if status == 404:
            self.session.gone = True
            raise MCPError(INVALID_REQUEST, "Session terminated")  # as the SDK says it

    async def _answer(self, response: HttpAnswer, rid: int, on_log: LogSink, on_progress: ProgressSink,
                      on_notice: NoticeSink) -> tuple[dict[str, Any], bool]:
        """The call's result, and whether every text in it is known writable as UTF-8 (a JSON answer's bytes
        ``surrogate_free``)."""
        status = response.status
        ctype = response.headers.get("content-type", "").lower()
        if status == 202:
            raise MCPError(INVALID_REQUEST, "server answered a request with 202 Accepted")
        if 300 <= status < 400:
            raise MCPError(INVALID_REQUEST, f"server redirected the request ({status}); not followed")
        if status == 404 and not self.modern and self.session.session_id:
            self.session.gone = True
            raise MCPError(INVALID_REQUEST, "Session terminated")  # as the SDK says it
        if status >= 400:
            if ctype.startswith("application/json"):
                try:
                    msg = json.loads(await read_bounded(response, self.max_answer))
                    if isinstance(msg, dict) and isinstance(msg.get("error"), dict):
                        _raise_error(msg["error"])
                except (ValueError, UnicodeDecodeError, RecursionError):
                    pass
            if status == 404:
                raise MCPError(METHOD_NOT_FOUND, "Not Found")
            raise MCPError(INTERNAL_ERROR, "Server returned an error response")
        if ctype.startswith("application/json"):
            body = await read_bounded(response, self.max_answer)
            free = surrogate_free(body)
            return response_for(_parse(body, free), rid), free
        if ctype.startswith("text/event-stream"):
            return await self._from_event_stream(response, rid, on_log, on_progress, on_notice), False
        raise MCPError(INVALID_REQUEST, f"Unexpected content type: {ctype[:80]}")

    async def _from_event_stream(self, response: HttpAnswer, rid: int, on_log: LogSink,
                                 on_progress: ProgressSink, on_notice: NoticeSink) -> dict[str, Any]:
        """Read events until the answer to ``rid``. Log lines go to ``on_log``, progress under our token to
        ``on_progress`` (which also moves the call's deadline), other notifications the SDK knows to
        ``on_notice``; a request from the upstream is answered on the handshake era and refused on 2026-07-28
        (the era forbids them mid-call). A handshake-era stream that ends without the answer after an event
        with an id (the server keeps its events) is resumed as the SDK resumes it: a GET with
        ``Last-Event-ID`` after the server's ``retry`` delay; two failed attempts in a row end the call."""
        state = _Resume()
        answer = await self._read_events(response, rid, on_log, on_progress, on_notice, state)
        failures = 0
        while answer is None:
            if state.last_id is None or self.modern or failures >= MAX_RESUMES:
                await self._session_kept()
                why = "the upstream's event stream ended without an answer"
                raise MCPError(INTERNAL_ERROR, why if failures == 0 else f"{why} (resuming it failed)")
            await asyncio.sleep((state.retry if state.retry is not None else RESUME_DELAY_MS) / 1000)
            headers = {"accept": "text/event-stream", "last-event-id": state.last_id,
                       MCP_PROTOCOL_VERSION_HEADER: self.era}
            if self.session.session_id:
                headers["mcp-session-id"] = self.session.session_id
            cookie = cookie_header(self.jar, self.url)
            if cookie:
                headers["cookie"] = cookie
            try:
                async with self.pool.request("GET", b"", headers) as resumed:
                    self._kept(resumed)
                    ctype = resumed.headers.get("content-type", "").lower()
                    if resumed.status != 200 or not ctype.startswith("text/event-stream"):
                        failures += 1
                        continue
                    failures = 0
                    answer = await self._read_events(resumed, rid, on_log, on_progress, on_notice, state)
            except HttpFault:
                failures += 1
        return answer

    async def _read_events(self, response: HttpAnswer, rid: int, on_log: LogSink, on_progress: ProgressSink,
                           on_notice: NoticeSink, state: "_Resume") -> dict[str, Any] | None:
        # closed here, not left to the collector: asyncio would finalize a suspended generator through
        # call_soon_threadsafe (a write to its wake-up pipe and one more turn of the loop, every call)
        async with aclosing(stream_events(response, min(self.max_answer, MAX_EVENT_BYTES))) as events:
            async for event in events:
                if event.id is not None:
                    state.last_id = event.id
                if event.retry is not None:
                    state.retry = event.retry
                if event.kind != "message" or not event.data:
                    continue  # another type of event, or a priming event (an id, no message): as the SDK does
                msg = _parse(event.data)
                if self.budget is not None:
                    self.budget.heard += 1  # a sign of life, answer or not (``Upstream._pinged``)
                if isinstance(msg, dict) and "method" in msg and "id" not in msg:
                    await self._notification(msg, rid, on_log, on_progress, on_notice)
                    budget = self.budget
                    if budget is not None and budget.pause_until:  # past it: the stream is read no further
                        await budget.paced()  # for now, the upstream waits at its write (notice_budget.py)
                    continue
                if isinstance(msg, dict) and "method" in msg:
                    # on 2026-07-28 refused (the era asks by input request), audited, and said to the
                    # upstream as the SDK's path says it: never left waiting (undeclared_requests.py)
                    await self._answer_request(msg)
                    continue
                return response_for(msg, rid)
        return None

    async def _notification(self, msg: dict[str, Any], rid: int, on_log: LogSink, on_progress: ProgressSink,
                            on_notice: NoticeSink) -> None:
        method = msg.get("method")
        if method == "notifications/progress":
            params = msg.get("params")
            if not await _progress(params, rid, on_progress):  # not this call's own: it reaches no one
                token, _ = progress_of(params)
                if self.stray is not None:
                    self.stray(token)
                elif self.budget is not None:
                    self.budget.spend()
            return
        notice, why = read(method, msg.get("params"), self.era)
        if why is not None:  # reaches no one: charged, said at a cadence (never a line each)
            if self.unfit is not None:
                self.unfit(why, method)
            elif self.budget is not None:
                self.budget.spend()
            return
        if isinstance(notice, LoggingMessageNotification):
            await on_log(notice.params)
        elif not isinstance(notice, CancelledNotification):
            await on_notice(notice)


@asynccontextmanager
async def lean_caller(target: Any, client: Client, session: HttpSession | None) -> AsyncIterator[
        LeanCaller | None]:
    """A lean caller for a connected streamable-HTTP upstream; None for every other kind, and when the
    environment sends the upstream through a proxy or says ``SENTINEL_LEAN_UPSTREAM=off``."""
    if not isinstance(target, RemoteServer) or target.kind != "streamable-http" or session is None:
        yield None
        return
    context = None
    if target.url.startswith("https://"):
        import httpx2

        from sentinel_mcp.tls.client_context import client_context

        # the same TLS context httpx2 builds for the SDK's client: the configured CA, pins and client
        # certificate, or the default store
        tls = client_context(target.tls if target.tls != "off" else None)
        context = httpx2.create_ssl_context(verify=tls if tls is not None else True)
    pool = pool_for(target.url, dict(target.headers), context, target.connect_timeout)
    if pool is None:
        yield None
        return
    caller = LeanCaller(pool, client, session, answer_limit(target))
    caller.url, caller.jar = target.url, lean_jar(session.cookies, target.headers or {})
    try:
        yield caller
    finally:
        await pool.aclose()


def answer_limit(target: Any) -> int:
    """The most bytes one message of ``target`` may be (its ``max_result_bytes``, within the gateway's
    own)."""
    said = getattr(target, "max_result_bytes", None)
    return MAX_ANSWER_BYTES if not isinstance(said, int) else min(said, MAX_ANSWER_BYTES)


def _parse(raw: bytes | str, free: bool | None = None) -> Any:
    """``raw`` parsed; ``free``: ``surrogate_free(raw)`` when the caller has it already."""
    try:
        msg = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise MCPError(PARSE_ERROR, f"Failed to parse JSON response: {type(e).__name__}") from None
    # the SDK's client parses a message with pydantic's JSON reader, which refuses a lone surrogate (a
    # ``\ud800`` escape, or its bytes, no UTF-8); ``json.loads`` takes both, and the result's model built from
    # the parsed value (``validated_result``) takes them too: refused here as the SDK refuses them
    if isinstance(raw, bytes):
        maybe = not (surrogate_free(raw) if free is None else free)
    else:
        maybe = "\\u" in raw
    if maybe and holds_lone_surrogate(msg):
        raise MCPError(PARSE_ERROR, "Failed to parse JSON response: a lone surrogate in a text")
    return msg


def live_session(client: Client) -> Any:
    """``client``'s SDK session, or the error of a connection that closed while a lean call was on its way
    (a reconnect tore it down: the call went away with it, and is answered so, never with the SDK's
    RuntimeError for a client used outside its context)."""
    try:
        return client.session
    except RuntimeError:  # (the SDK's word for a client whose context has ended)
        raise MCPError(CONNECTION_CLOSED, "Connection closed: the connection ended during the call") from None


def validated_result(client: Client, era: str, raw: dict[str, Any], utf8_texts: bool = False, *,
                     bound: bool = False) -> CallToolResult | InputRequiredResult:
    """As the SDK's ``send_request`` + ``call_tool`` validate a ``tools/call`` result on ``era`` (a plain one
    read directly into the same model: plain_upstream_result.py; ``utf8_texts`` as it takes it).
    ``bound``: ``result_shape.check_shape`` first, in the same pass as that read for a plain result."""
    if live_session(client)._call_tool_adapter is _CORE_CALL_TOOL_ADAPTER:
        plain = plain_call_result(era, raw, utf8_texts, bound)
        if plain is not None:
            return plain
    if bound:
        check_shape("tools/call", raw)  # before any model of it is built (result_shape.py)
    ttl = raw.get("ttlMs")
    if isinstance(ttl, int | float) and not isinstance(ttl, bool) and ttl < 0:
        raw["ttlMs"] = 0
    try:
        try:
            sdk_methods.validate_server_result("tools/call", era, raw)
        except KeyError:
            pass
        if not (foreign := _later_revision_fields("tools/call", era)).isdisjoint(raw):
            raw = {key: value for key, value in raw.items() if key not in foreign}
        result = client.session._call_tool_adapter.validate_python(raw, by_name=False)
    except ValueError as e:
        why = str(e)[:300]
        raise MCPError(PARSE_ERROR, f"upstream result is not a valid tools/call result: {why}") from None
    if isinstance(result, (CallToolResult, InputRequiredResult)):
        return result
    raise MCPError(PARSE_ERROR, f"upstream result is not a tools/call result: {type(result).__name__}")


def response_for(msg: Any, rid: int) -> dict[str, Any]:
    """The result of JSON-RPC response ``msg`` to request ``rid``; raises on anything else."""
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        what = "a batch" if isinstance(msg, list) else "not a JSON-RPC 2.0 message"
        raise MCPError(PARSE_ERROR, f"Failed to parse JSON response: {what}")
    mid = msg.get("id")
    if type(mid) is not int or mid != rid:
        what = repr(mid)[:40]
        raise MCPError(PARSE_ERROR, f"Failed to parse JSON response: answer to id {what}, not {rid}")
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


async def _progress(params: Any, rid: int, on_progress: ProgressSink) -> bool:
    """Whether it is the call's own (under its token, its values a report: ``progress_of``): then reported.
    Any other is no call's (the caller counts and charges it)."""
    token, report = progress_of(params)
    if type(token) is not int or token != rid or not report:
        return False
    await progress_to(params, on_progress)
    return True


async def progress_to(params: dict[str, Any], on_progress: ProgressSink) -> None:
    """A progress report's values (``progress_of`` said it is one) to ``on_progress``."""
    total, message = params.get("total"), params.get("message")
    await on_progress(
        float(params["progress"]), None if total is None else float(total),
        message if isinstance(message, str) else None
    )
