"""One upstream MCP server: its connection, supervised (connect, detect death, reconnect with backoff).

The connection is owned by one supervisor task (anyio needs the ``async with Client`` entered and left in the
same task). Calls from any task go through ``call_tool``, which applies the per-call timeout and the circuit
breaker, and flags a dead connection so the supervisor reconnects and re-initializes at once.
"""

from __future__ import annotations

import logging
import math
import random
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Literal

import anyio
from mcp import Client, MCPDeprecationWarning, StdioServerParameters
from mcp.client import ClientRequestContext, IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolResult,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    Implementation,
    InputRequiredResult,
    LoggingMessageNotificationParams,
    Prompt,
    PromptListChangedNotification,
    Resource,
    ResourceListChangedNotification,
    ResourceTemplate,
    Tool,
    ToolListChangedNotification,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp import __version__
from sentinel_mcp.config import RemoteServer, StdioServer
from sentinel_mcp.gateway.circuit_breaker import CircuitBreaker
from sentinel_mcp.gateway.process_groups import kill_groups, track_groups

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
log = logging.getLogger(__name__)

CONNECTION_CLOSED = -32000  # what the SDK raises for calls on a connection whose peer went away
REQUEST_TIMEOUT = -32001

State = Literal["connecting", "ready", "backoff", "stopped"]


@dataclass
class BuiltinTarget:
    """An in-process MCP server (``Server`` or ``MCPServer``) mounted like any other upstream."""

    server: Any
    prefix: str | None = None
    timeout: float = 300.0
    connect_timeout: float = 20.0
    protocol: Literal["auto", "legacy", "modern"] = "auto"
    concurrent: bool = True


Target = StdioServer | RemoteServer | BuiltinTarget


class UpstreamUnavailable(Exception):
    """The upstream cannot take calls now (not connected, or its circuit breaker is open)."""


class UpstreamCallError(Exception):
    """A call failed at the protocol level (timeout, connection lost, JSON-RPC error)."""

    def __init__(self, message: str, *, timeout: bool = False, code: int | None = None) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.code = code


class CallerLink:
    """The downstream side of one in-flight call, for relaying what the upstream pushes back during it."""

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        return ErrorData(code=-32600, message="this caller cannot answer elicitation")

    async def log(self, params: LoggingMessageNotificationParams) -> None:
        return None


@dataclass
class UpstreamHooks:
    catalog_changed: Callable[["Upstream"], Awaitable[None]]
    state_changed: Callable[["Upstream"], Awaitable[None]] | None = None


@dataclass
class UpstreamStatus:
    name: str
    state: State
    protocol: str | None
    tools: int
    breaker: str
    reconnects: int
    last_error: str | None
    connected_at: float | None


@dataclass
class _InFlight:
    link: CallerLink
    started: float = field(default_factory=time.monotonic)


class Upstream:
    def __init__(self, name: str, target: Target, hooks: UpstreamHooks, *, health_interval: float = 5.0,
                 breaker: CircuitBreaker | None = None, max_backoff: float = 30.0) -> None:
        self.name = name
        self.target = target
        self.hooks = hooks
        self.health_interval = health_interval
        self.max_backoff = max_backoff
        self.breaker = breaker or CircuitBreaker()
        self.state: State = "connecting"
        self.last_error: str | None = None
        self.reconnects = 0
        self.connected_at: float | None = None
        self.client: Client | None = None
        self.tools: dict[str, Tool] = {}
        self.resources: list[Resource] = []
        self.resource_templates: list[ResourceTemplate] = []
        self.prompts: list[Prompt] = []
        self.ready = anyio.Event()
        self._dead = anyio.Event()
        self._stop = anyio.Event()
        self._serial = anyio.Lock()
        self._inflight: dict[int, _InFlight] = {}
        self._next_call = 0

    # ------------------------------------------------------------------ properties
    @property
    def timeout(self) -> float:
        return self.target.timeout

    @property
    def prefix(self) -> str | None:
        return self.target.prefix

    @property
    def protocol_version(self) -> str | None:
        return self.client.protocol_version if self.client is not None else None

    @property
    def modern(self) -> bool:
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS

    def status(self) -> UpstreamStatus:
        return UpstreamStatus(self.name, self.state, self.protocol_version, len(self.tools), self.breaker.state,
                              self.reconnects, self.last_error, self.connected_at)

    # ------------------------------------------------------------------ connection supervisor
    def _make_client(self) -> Client:
        t = self.target
        mode = {"auto": "auto", "legacy": "legacy", "modern": "2026-07-28"}[t.protocol]
        if isinstance(t, StdioServer):
            server: Any = StdioServerParameters(command=t.command, args=t.args, env=t.env or None, cwd=t.cwd)
        elif isinstance(t, RemoteServer):
            server = self._remote_transport(t)
        else:
            server = t.server
        return Client(
            server,
            mode=mode,  # type: ignore[arg-type]
            read_timeout_seconds=t.timeout,
            cache=None,
            elicitation_callback=self._on_elicit,
            logging_callback=self._on_log,
            log_level="info",  # 2026-era upstreams send log lines only to requests that opt in
            message_handler=self._on_message,
            client_info=Implementation(name="sentinel-mcp", version=__version__),
        )

    @staticmethod
    def _remote_transport(t: RemoteServer) -> Any:
        import httpx2

        from sentinel_mcp.tls.client_context import httpx_verify

        # https: the server verified (system store or the server's "ca", optional pins), our client certificate
        verify = httpx_verify(t.tls if t.tls != "off" else None)
        if t.kind == "sse":
            from mcp.client.sse import sse_client

            def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
                return httpx2.AsyncClient(headers=headers, timeout=timeout or httpx2.Timeout(30, read=300),
                                          auth=auth, verify=verify)

            return sse_client(t.url, headers=t.headers or None, timeout=t.connect_timeout, sse_read_timeout=t.timeout,
                              httpx_client_factory=factory)
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=t.headers, timeout=httpx2.Timeout(t.connect_timeout, read=t.timeout),
                                  verify=verify)
        return streamable_http_client(t.url, http_client=http)

    async def run(self) -> None:
        """Supervise the connection until ``stop()``: connect, serve, detect death, back off, reconnect."""
        attempt = 0
        while not self._stop.is_set():
            self.state = "connecting"
            await self._notify_state()
            started = time.monotonic()
            try:
                await self._connect_and_serve()
            except Exception as e:  # noqa: BLE001 - a broken upstream never takes the gateway down
                self.last_error = _describe(e)
                log.warning("upstream %s: %s", self.name, self.last_error)
            finally:
                self._mark_disconnected()
            if self._stop.is_set():
                break
            if time.monotonic() - started > 30:
                attempt = 0  # it was up for a while: start the backoff afresh
            delay = min(self.max_backoff, 0.5 * 2**attempt) * (0.8 + 0.4 * random.random())
            attempt += 1
            self.reconnects += 1
            self.state = "backoff"
            await self._notify_state()
            log.warning("upstream %s: reconnecting in %.1fs", self.name, delay)
            with anyio.move_on_after(delay):
                await self._stop.wait()
        self.state = "stopped"

    async def _connect_and_serve(self) -> None:
        client = self._make_client()
        self._dead = anyio.Event()
        groups = track_groups()
        try:
            await self._serve(client)
        finally:
            if groups:
                with anyio.CancelScope(shield=True):
                    await kill_groups(groups)

    async def _serve(self, client: Client) -> None:
        with anyio.CancelScope() as scope:
            scope.deadline = anyio.current_time() + self.target.connect_timeout
            try:
                async with client:
                    scope.deadline = math.inf  # connected: only the connect step is time-limited
                    # relay, don't police: the client would validate upstream output against its schema
                    client.session.validate_tool_result = _no_validation  # type: ignore[method-assign]
                    self.client = client
                    await self.refresh()
                    self.state = "ready"
                    self.connected_at = time.time()
                    self.last_error = None
                    self.breaker.record_success()
                    self.ready.set()
                    log.info("upstream %s ready (%s, %d tools)", self.name, client.protocol_version, len(self.tools))
                    await self._notify_state()
                    await self.hooks.catalog_changed(self)
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(self._health_loop, tg.cancel_scope)
                        if self.modern:
                            tg.start_soon(self._listen_loop)
                        await self._stop_or_dead()
                        tg.cancel_scope.cancel()
            except BaseExceptionGroup as eg:  # the SDK wraps transport errors in nested groups
                raise RuntimeError(_describe(eg)) from None
        if scope.cancelled_caught and self.client is None:
            raise TimeoutError(f"no answer within {self.target.connect_timeout:.0f}s")

    async def _stop_or_dead(self) -> None:
        async with anyio.create_task_group() as tg:
            async def wait(ev: anyio.Event) -> None:
                await ev.wait()
                tg.cancel_scope.cancel()
            tg.start_soon(wait, self._stop)
            tg.start_soon(wait, self._dead)

    async def _health_loop(self, scope: anyio.CancelScope) -> None:
        while True:
            await anyio.sleep(self.health_interval)
            client = self.client
            if client is None:
                return
            try:
                with anyio.fail_after(max(2.0, self.health_interval)):
                    await client.send_ping()
            except MCPError as e:
                if e.code == CONNECTION_CLOSED or "closed" in e.message.lower():
                    self.last_error = "connection closed"
                    self._dead.set()
                    return
                # e.g. a server that does not implement ping: alive enough
            except TimeoutError:
                self.last_error = "health check timed out"
                self._dead.set()
                return
            except Exception as e:  # noqa: BLE001
                self.last_error = _describe(e)
                self._dead.set()
                return

    async def _listen_loop(self) -> None:
        """2026-era upstreams announce list changes only on a ``subscriptions/listen`` stream."""
        client = self.client
        if client is None or not (client.server_capabilities and client.server_capabilities.tools
                                  and client.server_capabilities.tools.list_changed):
            return
        try:
            async with client.listen(tools_list_changed=True, prompts_list_changed=True,
                                     resources_list_changed=True) as sub:
                async for _event in sub:
                    await self._refresh_and_announce()
        except Exception as e:  # noqa: BLE001 - listening is best effort
            log.debug("upstream %s: listen ended: %s", self.name, _describe(e))

    def _mark_disconnected(self) -> None:
        self.client = None
        self.ready = anyio.Event()
        self.connected_at = None

    async def _notify_state(self) -> None:
        if self.hooks.state_changed is not None:
            try:
                await self.hooks.state_changed(self)
            except Exception:  # noqa: BLE001
                log.exception("state hook failed")

    async def stop(self) -> None:
        self._stop.set()

    # ------------------------------------------------------------------ catalog
    async def refresh(self) -> None:
        client = self.client
        if client is None:
            return
        caps = client.server_capabilities
        tools: list[Tool] = []
        if caps is None or caps.tools is not None:
            tools = await _all_pages(client.list_tools, "tools")
        resources: list[Resource] = []
        templates: list[ResourceTemplate] = []
        if caps is not None and caps.resources is not None:
            resources = await _all_pages(client.list_resources, "resources")
            templates = await _all_pages(client.list_resource_templates, "resource_templates")
        prompts: list[Prompt] = []
        if caps is not None and caps.prompts is not None:
            prompts = await _all_pages(client.list_prompts, "prompts")
        self.tools = {t.name: t for t in tools}
        self.resources, self.resource_templates, self.prompts = resources, templates, prompts

    async def _refresh_and_announce(self) -> None:
        try:
            await self.refresh()
        except Exception as e:  # noqa: BLE001
            log.warning("upstream %s: refresh after list_changed failed: %s", self.name, _describe(e))
            return
        await self.hooks.catalog_changed(self)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, (ToolListChangedNotification, PromptListChangedNotification,
                                ResourceListChangedNotification)):
            # refresh outside the receive loop: listing from inside it would wait on itself
            import asyncio

            asyncio.get_running_loop().create_task(self._refresh_and_announce())

    # ------------------------------------------------------------------ relays (push-era upstreams)
    def _sole_caller(self) -> CallerLink | None:
        """Push requests carry nothing that names the call that caused them: route only when unambiguous."""
        if len(self._inflight) == 1:
            return next(iter(self._inflight.values())).link
        return None

    async def _on_elicit(self, ctx: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        link = self._sole_caller()
        if link is None:
            return ErrorData(code=-32600, message="sentinel: cannot tell which call this elicitation belongs to")
        return await link.elicit(params)

    async def _on_log(self, params: LoggingMessageNotificationParams) -> None:
        link = self._sole_caller()
        if link is not None:
            await link.log(params)
        else:
            log.info("upstream %s log [%s]: %s", self.name, params.level, params.data)

    # ------------------------------------------------------------------ calls
    async def wait_ready(self, timeout: float) -> bool:
        with anyio.move_on_after(timeout):
            await self.ready.wait()
            return True
        return False

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        link: CallerLink | None = None,
        progress: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
        input_responses: dict[str, Any] | None = None,
        request_state: str | None = None,
        meta: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> CallToolResult | InputRequiredResult:
        if not self.breaker.allow():
            raise UpstreamUnavailable(
                f"upstream {self.name} is failing; circuit open, retry in {self.breaker.retry_after():.0f}s")
        if self.client is None and not await self.wait_ready(min(5.0, self.target.connect_timeout)):
            self.breaker._probe_in_flight = False
            raise UpstreamUnavailable(
                f"upstream {self.name} is not connected ({self.state}; {self.last_error or 'starting'})")
        serialize = not self.modern and not getattr(self.target, "concurrent", False)
        if serialize:
            async with self._serial:
                return await self._call(tool, arguments, link, progress, input_responses, request_state, meta,
                                        timeout)
        return await self._call(tool, arguments, link, progress, input_responses, request_state, meta, timeout)

    async def _call(self, tool: str, arguments: dict[str, Any], link: CallerLink | None, progress: Any,
                    input_responses: dict[str, Any] | None, request_state: str | None,
                    meta: dict[str, Any] | None, timeout: float | None) -> CallToolResult | InputRequiredResult:
        client = self.client
        if client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        self._next_call += 1
        call_id = self._next_call
        self._inflight[call_id] = _InFlight(link or CallerLink())
        try:
            result = await client.session.call_tool(
                tool, arguments, read_timeout_seconds=timeout or self.target.timeout, progress_callback=progress,
                input_responses=input_responses, request_state=request_state, meta=meta,  # type: ignore[arg-type]
                allow_input_required=True)
        except MCPError as e:
            if e.code == REQUEST_TIMEOUT:
                self.breaker.record_failure()
                raise UpstreamCallError(f"upstream {self.name} did not answer within "
                                        f"{timeout or self.target.timeout:.0f}s", timeout=True, code=e.code) from None
            if e.code == CONNECTION_CLOSED or "connection closed" in e.message.lower():
                self.breaker.record_failure()
                self.last_error = "connection closed during a call"
                self._dead.set()
                raise UpstreamCallError(f"upstream {self.name} went away during the call; reconnecting",
                                        code=e.code) from None
            # a JSON-RPC error answer (unknown tool, invalid params...): the upstream itself is healthy
            self.breaker.record_success()
            raise UpstreamCallError(f"upstream {self.name} error {e.code}: {e.message}", code=e.code) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream) as e:
            self.breaker.record_failure()
            self._dead.set()
            raise UpstreamCallError(f"upstream {self.name} connection lost: {type(e).__name__}") from None
        finally:
            self._inflight.pop(call_id, None)
        self.breaker.record_success()
        if isinstance(result, (CallToolResult, InputRequiredResult)):
            return result
        raise UpstreamCallError(f"upstream {self.name} returned an unexpected result type {type(result).__name__}")

    async def read_resource(self, uri: str) -> Any:
        if self.client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        return await self.client.session.read_resource(uri)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> Any:
        if self.client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        return await self.client.session.get_prompt(name, arguments)


async def _all_pages(list_page: Callable[..., Awaitable[Any]], field_name: str) -> list[Any]:
    """Walk every page of an upstream list (tools, resources, templates, prompts)."""
    items: list[Any] = []
    cursor = None
    while True:
        page = await list_page(cursor=cursor)
        items.extend(getattr(page, field_name))
        cursor = page.next_cursor
        if not cursor:
            return items


async def _no_validation(name: str, result: CallToolResult) -> None:
    return None


def _describe(e: BaseException) -> str:
    """Flatten nested ExceptionGroups into one readable line."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(dict.fromkeys(_describe(x) for x in e.exceptions))
    text = str(e) or type(e).__name__
    if isinstance(e, MCPError):
        return f"MCP error {e.code}: {e.message}"
    if isinstance(e, FileNotFoundError):
        return f"command not found: {e.filename or text}"
    return f"{type(e).__name__}: {text}" if not text.startswith(type(e).__name__) else text
