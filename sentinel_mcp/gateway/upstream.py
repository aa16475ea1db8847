"""One upstream MCP server: its connection, supervised (connect, detect death, reconnect with backoff).

The connection is owned by one supervisor task (anyio needs the ``async with Client`` entered and left in the
same task). Calls from any task go through ``call_tool`` (upstream_calls.py), which applies the per-call
timeout and the circuit breaker, and flags a dead connection so the supervisor reconnects and re-initializes.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
import warnings
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from typing import Any, Awaitable, Callable, Literal

import anyio
from mcp import Client, MCPDeprecationWarning
from mcp.client import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.shared.dispatcher import coerce_request_id
from mcp.types import (
    CallToolResult,
    DiscoverResult,
    ElicitCompleteNotification,
    Prompt,
    ProgressNotification,
    PromptListChangedNotification,
    Resource,
    ResourceListChangedNotification,
    ResourceTemplate,
    ResourceUpdatedNotification,
    Tool,
    ToolListChangedNotification,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp.config import RemoteServer, StdioServer
from sentinel_mcp.core.caller_link import CallerLink, CallOf
from sentinel_mcp.core.display_text import compose, said
from sentinel_mcp.gateway.builtin_direct import DirectDispatcher, direct_path
from sentinel_mcp.gateway.circuit_breaker import CircuitBreaker
from sentinel_mcp.gateway.slow_call_breakers import SlowCallBreakers
from sentinel_mcp.gateway.lazy_builtins import BuiltinTarget, LazyBuiltin
from sentinel_mcp.gateway.lean_upstream import HttpSession, LeanCaller, answer_limit, lean_caller
from sentinel_mcp.gateway.lean_stdio import StdioCaller, stdio_caller
from sentinel_mcp.gateway.result_shape import ShapedDispatcher
from sentinel_mcp.gateway.fair_slots import FairSlots
from sentinel_mcp.gateway.push_shares import PushShares
from sentinel_mcp.gateway.party_turns import PartyTurns
from sentinel_mcp.gateway.principal_sessions import PrincipalSessions
from sentinel_mcp.gateway.relay_permits import ELICITATION, ROOTS, SAMPLING, connection_relays
from sentinel_mcp.gateway.relay_permits import permitted_relays, shared_roots_refused
from sentinel_mcp.gateway.ping_backlog import backlog_read, pinged
from sentinel_mcp.gateway.process_groups import kill_groups, meter_pipes, tap_pipes, track_groups
from sentinel_mcp.gateway.push_callers import ConnectionCallers
from sentinel_mcp.gateway.upstream_client import (
    Mode,
    UpstreamUnavailable,
    describe_error,
    make_client,
    modes_to_try,
)
from sentinel_mcp.gateway.upstream_calls import CONNECTION_CLOSED, UpstreamCallError, UpstreamCalls, _InFlight
from sentinel_mcp.gateway.upstream_listing import UpstreamListing
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.notice_queue import NoticeQueue
from sentinel_mcp.gateway.upstream_relays import PushRelays, ResourceWatch
from sentinel_mcp.core.errors import GatewayError

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
# re-exported: the rest of the gateway imports these from here
__all__ = ["BuiltinTarget", "CallerLink", "Target", "Upstream", "UpstreamCallError", "UpstreamHooks",
           "UpstreamStatus", "UpstreamUnavailable"]
log = logging.getLogger(__name__)
# health windows in a row an upstream may write, all read, without answering the ping (a busy one's late
# answer comes within a few)
PING_PATIENCE = 6

State = Literal["connecting", "ready", "backoff", "stopped"]


Target = StdioServer | RemoteServer | BuiltinTarget


class HandshakeRejected(GatewayError):
    """The upstream answered the connect step with a protocol error (it does not speak that era)."""


@dataclass
class UpstreamHooks:
    catalog_changed: Callable[["Upstream"], Awaitable[None]]
    state_changed: Callable[["Upstream"], Awaitable[None]] | None = None
    # notifications that belong to whoever subscribed or was asked, not to one call
    resource_updated: Callable[["Upstream", str], Awaitable[None]] | None = None
    elicit_complete: Callable[["Upstream", str], Awaitable[None]] | None = None
    # a request it pushed during a call, refused (kind, cause, why, the call): the gateway audits it
    push_refused: Callable[["Upstream", str, str, str, CallOf | None], Awaitable[None]] | None = None


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


class Upstream(UpstreamCalls, PushRelays, ResourceWatch, UpstreamListing, LazyBuiltin):
    def __init__(self, name: str, target: Target, hooks: UpstreamHooks, *, health_interval: float = 5.0,
                 breaker: CircuitBreaker | None = None, max_backoff: float = 30.0,
                 principal: str | None = None) -> None:
        """``principal``: this is that principal's own session of an upstream configured per principal."""
        self.name = name
        self.principal = principal  # whose own session this is (its resource updates are that principal's)
        self.target = target
        self.hooks = hooks
        self.health_interval = health_interval
        self.max_backoff = max_backoff
        self.breaker = breaker or CircuitBreaker()
        self.slow_calls = SlowCallBreakers(self.breaker)  # calls that time out: their principal's own
        self.state: State = "connecting"
        self.last_error: str | None = None
        self.reconnects = 0
        self.connected_at: float | None = None
        self.client: Client | None = None
        self.direct: DirectDispatcher | None = None  # a built-in's direct calls (builtin_direct.py)
        # an HTTP or stdio upstream's plain tools/call (lean_upstream.py, lean_stdio.py)
        self.lean: LeanCaller | StdioCaller | None = None
        self.tools: dict[str, Tool] = {}
        self.resources: list[Resource] = []
        self.resource_templates: list[ResourceTemplate] = []
        self.prompts: list[Prompt] = []
        # connected (its calls can be made) and ready (listed: its tools in the catalog, its hook run) are
        # apart: a call waiting for a connection does not wait for clients to be told of its tools
        self.connected = anyio.Event()
        self.ready = anyio.Event()
        # the first connect attempt ended (ready or failed): start-up stops waiting
        self.settled = anyio.Event()
        # a stdio upstream's process was spawned (or could not be), or the first attempt ended: see
        # app/runtime.py
        self.launched = anyio.Event()
        # the first connect attempt's outcome is in the catalog (its tools, or it failed), or it was stopped:
        # a call for a name not there stops waiting for it (first_connections.py); ``first_deadline``: when
        # that attempt's connect_timeout ends (anyio's clock), set as it starts
        self.first_listed = anyio.Event()
        self.first_deadline: float | None = None
        self._meters: list[Any] = []  # a stdio upstream's process's stdout, measured (ping_backlog.py)
        self._init_lazy(target)
        if self._described is not None:  # its recorded tools are in the catalog from the start
            self.first_listed.set()
        self._dead = anyio.Event()
        self._stop = anyio.Event()
        # calls that take turns (``_serialized``): one client session's overlap, other callers wait
        self._turns = PartyTurns()
        self._inflight: dict[int, _InFlight] = {}
        # whose calls the connection carried: a push naming no call reaches no one once they are several
        self.callers = ConnectionCallers()
        self._waiting_pushes = PushShares()  # pushed requests waiting for answers, by principal
        # log lines, progress, resource updates on their way to clients (bounded, never holding a reader up)
        self.notice_budget = NoticeBudget(name)  # notices that reach no client, a second (notice_budget.py)
        self.notices_unfit = {}
        # what it drops is not charged to the upstream's budget: a client reading slowly (another principal's,
        # on a shared upstream) would pause the upstream's reading for every principal's calls
        self.notices = NoticeQueue(name)
        limit = getattr(target, "max_in_flight", None)
        self._slots = FairSlots(limit) if limit else None  # calls sent to it at once, shared fairly
        self.waiting_for_slot = 0
        self._next_call = 0
        self._mode: Mode | None = None  # the connect mode that worked (reconnects start there)
        self._tg: anyio.abc.TaskGroup | None = None  # the connection's own tasks
        self._session: HttpSession | None = None  # the connection's HTTP session (see _session_gone)
        self.subscribed: set[str] = set()  # resource URIs some client subscribed to through us
        self._watchers: dict[str, anyio.CancelScope] = {}  # 2026 upstreams: one listen stream per URI
        self.log_level: str | None = None
        # isolation "per_principal": each principal's calls go to a session of its own (principal_sessions.py)
        self.principals: PrincipalSessions | None = None
        if principal is None and isinstance(target, (StdioServer, RemoteServer)) and (
            target.isolation == "per_principal"
        ):
            self.principals = PrincipalSessions(name, target.max_principals, target.principal_idle_seconds,
                                                target.connect_timeout, self._principal_session)

    # ------------------------------------------------------------------ properties
    @property
    def timeout(self) -> float:
        return self.target.timeout

    @property
    def prefix(self) -> str | None:
        return self.target.prefix

    @property
    def protocol_version(self) -> str | None:
        if self.client is not None:
            return self.client.protocol_version
        return self._described.protocol_version if self._described is not None else None

    @property
    def modern(self) -> bool:
        return self.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def builtin(self) -> bool:
        """Mounted by Sentinel itself (its tools are Sentinel's own code, never pinned)."""
        return isinstance(self.target, BuiltinTarget)

    def status(self) -> UpstreamStatus:
        return UpstreamStatus(
            self.name,
            self.state,
            self.protocol_version,
            len(self.tools),
            self.breaker.state,
            self.reconnects,
            self.last_error,
            self.connected_at,
        )

    # ------------------------------------------------------------------ connection supervisor
    def _callbacks(self) -> dict[str, Any]:
        callbacks = dict(
            elicitation_callback=self._on_elicit,
            sampling_callback=self._on_sample,
            list_roots_callback=self._on_roots,
            logging_callback=self._on_log,
            message_handler=self._on_message,
        )
        if ROOTS not in self.declared_kinds:
            # no roots declared on a connection serving several principals: a roots request on it is refused
            # and audited (undeclared_requests.py), a 2026-era one refused with its reason (relay_permits.py)
            del callbacks["list_roots_callback"]
        return callbacks

    @property
    def declared_kinds(self) -> frozenset[str]:
        """The kinds of request this connection is told Sentinel answers (a callback handed to the SDK)."""
        return frozenset({ELICITATION, SAMPLING}) | (self.relays_here & {ROOTS})

    @property
    def relays_here(self) -> frozenset[str]:
        """What this server may ask on this connection (relay_permits.py)."""
        return connection_relays(self.target, self.shared)

    def share_slots(self, others: bool) -> None:
        """``others``: a principal besides the owner may call this upstream; one alone then leaves a
        ``max_in_flight`` slot for the next to arrive (fair_slots.py), and the connection is told of no roots
        (relay_permits.py; a principal's own session, ``per_principal``, is: its connection serves one). The
        catalog's session of a ``per_principal`` server serves no principal's call: it is told of none."""
        if self._slots is not None:
            self._slots.shared = others
        self.shared = others or self.principals is not None
        # roots it would have were it one principal's: said once, so a server that needs them is understood
        if others and self.principals is None and ROOTS in permitted_relays(self.target) and (
            ROOTS not in self.relays_here
        ):
            listed = ROOTS in (getattr(self.target, "relays", None) or ())
            log.log(logging.WARNING if listed else logging.INFO, "upstream %s: no roots declared: %s",
                    self.name, shared_roots_refused(self.name))

    def _principal_session(self, principal: str) -> "Upstream":
        """A new session of this upstream for ``principal``: the catalog is this one's, not its (its list
        changes reach no one); what it pushes reaches the gateway as this upstream's."""
        own = Upstream(self.name, self.target, UpstreamHooks(
            catalog_changed=_no_catalog, resource_updated=self.hooks.resource_updated,
            elicit_complete=self.hooks.elicit_complete, push_refused=self.hooks.push_refused,
        ), health_interval=self.health_interval, max_backoff=self.max_backoff, principal=principal)
        own.log_level = self.log_level
        own._slots = self._slots  # ``max_in_flight`` is the server's: shared by every principal's session
        return own

    async def set_log_level(self, level: str | None) -> None:
        await super().set_log_level(level)
        if self.principals is not None:  # each principal's session too (one opened later starts with it)
            for own in self.principals.open().values():
                await own.set_log_level(level)

    async def run(self) -> None:
        """Supervise the connection until ``stop()``; an upstream kept per principal runs their sessions
        beside its own."""
        if self.principals is not None:
            await self.principals.run(self._supervise)
        else:
            await self._supervise()

    async def _supervise(self) -> None:
        """Connect, serve, detect death, back off, reconnect; until ``stop()``."""
        if self._described is not None and not await self._until_first_use():
            self.state = "stopped"
            return
        attempt = 0
        self.first_deadline = anyio.current_time() + getattr(self.target, "connect_timeout", 20.0)
        while not self._stop.is_set():
            self.state = "connecting"
            await self._notify_state()
            started = time.monotonic()
            try:
                await self._connect_and_serve()
            except Exception as e:  # noqa: BLE001 - a broken upstream never takes the gateway down
                self.last_error = describe_error(e)
                log.warning("upstream %s: %s", self.name, self.last_error)
            finally:
                self.settled.set()
                self.launched.set()
                self.first_listed.set()
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
        modes = modes_to_try(self.target.protocol, self._mode)
        for mode in modes:
            self._dead = anyio.Event()
            groups = track_groups(self.launched, self.name, self.principal)
            taps = tap_pipes(answer_limit(self.target)) if stdio_caller(self.target) else None
            self._meters = meter_pipes() if isinstance(self.target, StdioServer) else []
            session = self._session = HttpSession()
            try:
                # what it is told Sentinel answers, and nothing else (undeclared_requests.py)
                screen = partial(self.screen_request, self.declared_kinds)
                await self._serve(make_client(self.target, mode, self._callbacks(), session, screen,
                                              self.notice_budget, self._asked, self.notice_stray), mode,
                                  session, taps)
                return
            except HandshakeRejected as e:
                if mode == modes[-1]:
                    raise RuntimeError(said(e)) from None  # its marks kept (describe_error)
                log.info("upstream %s: %s; trying %s", self.name, e, modes[-1])
            finally:
                if groups:
                    with anyio.CancelScope(shield=True):
                        await kill_groups(groups)

    async def _serve(self, client: Client, mode: Mode, session: HttpSession, taps: list[Any] | None) -> None:
        with anyio.CancelScope() as scope:
            scope.deadline = anyio.current_time() + self.target.connect_timeout
            try:
                async with client, AsyncExitStack() as stack:
                    scope.deadline = math.inf  # connected: only the connect step is time-limited
                    # relay, don't police: the client would validate upstream output against its schema
                    client.session.validate_tool_result = _no_validation  # type: ignore[method-assign]
                    if not isinstance(self.target, BuiltinTarget):  # its results' shape, before their models
                        client.session._dispatcher = ShapedDispatcher(client.session._dispatcher)
                    if (
                        mode == "2026-07-28"
                    ):  # pinned: the upstream's real capabilities, and proof it speaks 2026
                        raw = await client.session.send_discover(mode)
                        client.session.adopt(DiscoverResult.model_validate(raw))
                    if isinstance(self.target, BuiltinTarget):
                        tools = self.target.direct_tools
                        self.direct = await stack.enter_async_context(
                            direct_path(client, self.target.server, tools, self._on_log)
                        )
                    if taps:  # a stdio upstream's process, its pipes shared with the lean calls
                        taps[-1].tap.budget = self.notice_budget
                        self.lean = StdioCaller(taps[-1].tap, client)
                    else:
                        self.lean = await stack.enter_async_context(lean_caller(self.target, client, session))
                        if isinstance(self.lean, LeanCaller):
                            self.lean.budget, self.lean.stray = self.notice_budget, self.stray_progress
                            self.lean.unfit = self.unfit_notice
                    self.callers.reset()  # a new connection: nothing called on it can push
                    self.roots_given_to = None  # nor was it given any roots
                    self.client = client
                    self._mode = mode
                    await self._apply_log_level()
                    await self.refresh()
                    self.state = "ready"
                    self.connected_at = time.time()
                    self.last_error = None
                    self.breaker.record_success()
                    self.connected.set()
                    self.settled.set()
                    log.info(
                        "upstream %s ready (%s, %d tools)",
                        self.name,
                        client.protocol_version,
                        len(self.tools),
                    )
                    await self._notify_state()
                    await self.hooks.catalog_changed(self)
                    # after the rebuild (and its clients told): whoever waits for either finds its tools
                    self.ready.set()
                    self.first_listed.set()
                    async with anyio.create_task_group() as tg:
                        self._tg = tg
                        tg.start_soon(self._health_loop, tg.cancel_scope)
                        if self.modern:
                            tg.start_soon(self._listen_loop)
                        for uri in list(self.subscribed):  # a reconnect: the upstream forgot them
                            await self._watch(uri)
                        await self._stop_or_dead()
                        tg.cancel_scope.cancel()
            except BaseExceptionGroup as eg:  # the SDK wraps transport errors in nested groups
                if self.client is None and _protocol_error(eg):
                    raise HandshakeRejected(compose(f"{mode} connect refused: ", describe_error(eg))
                                            ) from None
                raise RuntimeError(describe_error(eg)) from None
            except MCPError as e:
                if self.client is None:
                    raise HandshakeRejected(compose(f"{mode} connect refused: ", describe_error(e))) from None
                raise
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
                await self._pinged(client)
            except MCPError as e:
                if e.code == CONNECTION_CLOSED or "closed" in e.message.lower() or self._session_gone():
                    self.last_error = "session terminated" if self._session_gone() else "connection closed"
                    self._dead.set()
                    return
                # e.g. a server that does not implement ping: alive enough
            except TimeoutError as e:
                self.last_error = str(e) or "health check timed out"
                self._dead.set()
                return
            except Exception as e:  # noqa: BLE001
                self.last_error = describe_error(e)
                self._dead.set()
                return

    async def _pinged(self, client: Client) -> None:
        """A ping answered; ``TimeoutError`` once a whole window (``health_interval``, 2 s at least) passed
        in which the upstream said nothing at all. Its answer comes after everything it wrote before (a pipe
        keeps order): one busy writing (a flood of its own requests, each handled before the answer is read,
        on a loaded machine) answers late and is alive; cut, every call on its connection failed. But one
        that writes on through ``PING_PATIENCE`` windows read in full, and never answers, is not answering
        (it was kept for ever, shown ready). A window in which Sentinel paused its reading counts once what
        waited ahead of the answer when the ping went has been read (``ping_backlog.py``)."""
        window = max(2.0, self.health_interval)
        ping = asyncio.ensure_future(pinged(client))
        try:
            heard, busy = self._heard(), 0
            read = backlog_read(self.target, self._meters[-1] if self._meters else None, self.notice_budget)
            while not (await asyncio.wait((ping,), timeout=window))[0]:
                now = self._heard()
                silent, heard = now == heard, now
                if self._reading_paused() and (silent or not read()):
                    continue  # our silence, not its: the answer may wait behind what we had not read
                if silent:
                    raise TimeoutError
                busy += 1
                if busy >= PING_PATIENCE:  # it writes, we read, and it never answers: it does not answer
                    raise TimeoutError(f"health check not answered in {busy * window:.0f}s while it kept "
                                       "writing")
            ping.result()
        finally:
            ping.cancel()

    def _asked(self, rid: Any) -> bool:
        """Whether a request of id ``rid`` waits for its answer on the SDK's session (an answer to none
        reaches no client: ``paced_reading.py``); before the session is up, every answer is taken as asked."""
        client = self.client
        # the SDK's own table of requests waiting (a dispatcher without one: nothing to tell, nothing charged)
        pending = getattr(client.session._dispatcher, "_pending", None) if client is not None else None
        return pending is None or coerce_request_id(rid) in pending

    def _reading_paused(self) -> bool:
        """It is not read for a while by Sentinel's own choice (too many notices to nobody, on whichever road:
        ``notice_budget.py``): a silence of ours, not the upstream's."""
        return bool(self.notice_budget.pause_until)

    def _heard(self) -> int:
        """What the upstream has said so far, counted: its requests, a stdio process's reads off its stdout
        (its answers, notices, anything), the messages read off its SDK transport and its lean HTTP calls'
        event streams (``NoticeBudget.heard``): one writing only notices is heard on every road."""
        tap = self.lean.tap.heard if isinstance(self.lean, StdioCaller) else 0
        return self.requests_heard + tap + self.notice_budget.heard

    async def _listen_loop(self) -> None:
        """2026-era upstreams announce list changes only on a ``subscriptions/listen`` stream."""
        client = self.client
        if client is None or not (
            client.server_capabilities
            and client.server_capabilities.tools
            and client.server_capabilities.tools.list_changed
        ):
            return
        try:
            async with client.listen(
                tools_list_changed=True, prompts_list_changed=True, resources_list_changed=True
            ) as sub:
                async for _event in sub:
                    self.relist()  # coalesced, as the handshake era's notices
        except Exception as e:  # noqa: BLE001 - listening is best effort
            log.debug("upstream %s: listen ended: %s", self.name, describe_error(e))

    def _mark_disconnected(self) -> None:
        self.stop_relisting()
        self._tg = None
        self._watchers.clear()
        self.client = None
        self.direct = None
        self.lean = None
        self.connected = anyio.Event()
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
        self.first_listed.set()  # no call waits for an upstream being stopped

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            self._on_garbage(message)
            return
        if isinstance(message, ResourceUpdatedNotification):
            self.updated(message.params.uri)
            return
        if isinstance(message, ProgressNotification):  # a call's own, routed by the SDK (progress_stray)
            return
        if isinstance(message, ElicitCompleteNotification) and self.hooks.elicit_complete is not None:
            await self.hooks.elicit_complete(self, message.params.elicitation_id)
            return
        if isinstance(
            message,
            (ToolListChangedNotification, PromptListChangedNotification, ResourceListChangedNotification),
        ):
            # refresh outside the receive loop (listing from inside it would wait on itself), one at a time
            self.relist()

def _protocol_error(e: BaseException) -> bool:
    """An MCP error answer somewhere in a (nested) exception group: the peer is there but refused."""
    if isinstance(e, BaseExceptionGroup):
        return any(_protocol_error(x) for x in e.exceptions)
    return isinstance(e, MCPError) and e.code != CONNECTION_CLOSED


async def _no_catalog(_up: Upstream) -> None:
    return None


async def _no_validation(name: str, result: CallToolResult) -> None:
    return None
