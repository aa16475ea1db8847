"""An upstream's calls: ``tools/call`` (through the lean caller where it can, else the SDK's client session),
resources, prompts and completions, each with the per-call deadline, the circuit breaker and the errors the
gateway reports. Mixed into ``Upstream`` (upstream.py), which owns the connection these calls run on.
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Hashable, cast

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, CompleteResult, InputRequiredResult, RequestParamsMeta
from pydantic import ValidationError

from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.core.caller_link import CURRENT_LINK, CallerLink
from sentinel_mcp.core.display_text import MESSAGE_LIMIT, compose, safe_text
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.gateway.circuit_breaker import CircuitBreaker
from sentinel_mcp.gateway.fair_slots import FairSlots
from sentinel_mcp.gateway.slow_call_breakers import SlowCallBreakers
from sentinel_mcp.gateway.lean_stdio import StdioCaller
from sentinel_mcp.gateway.result_shape import ResultRefused
from sentinel_mcp.gateway.lean_upstream import INVALID_REQUEST, HttpSession, LeanCaller
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.notice_queue import NoticeQueue
from sentinel_mcp.core.own_voice import attributed_line
from sentinel_mcp.gateway.party_turns import PartyTurns
from sentinel_mcp.gateway.push_callers import ConnectionCallers
from sentinel_mcp.gateway.builtin_direct import DirectDispatcher
from sentinel_mcp.gateway.caller_recheck import recheck_caller
from sentinel_mcp.gateway.step_deadline import StepDeadline
from sentinel_mcp.gateway.telemetry import traced
from sentinel_mcp.gateway.upstream_client import UpstreamUnavailable

# a progress report's message kept while it waits (more than a client is shown, front_link.py): never the
# megabytes a line may hold while 64 of them wait
PROGRESS_MESSAGE_CHARS = 2_000
log = logging.getLogger(__name__)

CONNECTION_CLOSED = -32000  # what the SDK raises for calls on a connection whose peer went away
REQUEST_TIMEOUT = -32001
PARSE_ERROR = -32700


class UpstreamCallError(GatewayError):
    """A call failed at the protocol level (timeout, connection lost, JSON-RPC error)."""

    def __init__(self, message: str, *, timeout: bool = False, code: int | None = None) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.code = code



@dataclass(eq=False)  # one call: hashed by identity (the key of its notices)
class _InFlight:
    link: CallerLink
    started: float = field(default_factory=time.monotonic)
    # the call's deadline once it runs: ``_on_garbage`` ends it from outside (due at once)
    deadline: StepDeadline | None = None
    garbage: str | None = None  # the upstream sent something that is not MCP while this call waited
    who: str | None = None  # whose call it is: its notices' share of the upstream's (notice_queue.py)
    # sent as one POST (the lean path over streamable HTTP): its own requests come on its own stream, read in
    # its task, which names it; one that names no call is on the server's standalone stream, never this one's
    streamed: bool = False




class UpstreamCalls:
    """Mixed into ``Upstream`` (which owns the state and the connection)."""

    name: str
    notices: NoticeQueue
    notice_budget: NoticeBudget
    _slots: FairSlots | None  # ``max_in_flight``, when the config sets it (shared fairly by principals)
    waiting_for_slot: int
    target: Any
    client: Client | None
    breaker: CircuitBreaker
    slow_calls: SlowCallBreakers
    state: str
    last_error: str | None
    lean: LeanCaller | StdioCaller | None
    ready: anyio.Event
    connected: anyio.Event
    _described: Any
    _dead: anyio.Event
    _turns: PartyTurns
    _inflight: dict[int, _InFlight]
    callers: ConnectionCallers
    _next_call: int
    _session: HttpSession | None
    direct: DirectDispatcher | None  # a built-in's direct calls (upstream.py)

    if TYPE_CHECKING:  # the owner's and its other bases' (a stub here would shadow theirs in the MRO)
        @property
        def modern(self) -> bool: ...

        @property
        def loaded(self) -> bool: ...

        @property
        def builtin(self) -> bool: ...

        async def _woken(self) -> None: ...

        async def _on_log(self, params: Any) -> None: ...

        async def _on_message(self, message: Any) -> None: ...

        def _listing_lost(self, what: str) -> None: ...

    def _on_garbage(self, error: Exception) -> None:
        """The upstream wrote something that is not a JSON-RPC message. Its answer to a waiting call may be
        lost in it, and nothing names which call: fail every waiting call now instead of at its timeout."""
        what = _garbage_text(error)
        log.warning("upstream %s sent an invalid message (%s)", self.name, what)
        self._listing_lost(what)
        for flight in list(self._inflight.values()):
            if flight.deadline is not None and flight.garbage is None:
                flight.garbage = what
                try:
                    flight.deadline.reschedule(-math.inf)  # due now: the waiting call ends (below, in _call)
                except RuntimeError:
                    pass  # the call has just ended: nothing is waiting

    async def wait_ready(self, timeout: float, listed: bool = True) -> bool:
        """Whether it was ready (listed: its tools in the catalog, its hook run) within ``timeout``;
        ``listed=False``: whether its calls could be made (all a call waits for)."""
        with anyio.move_on_after(timeout):
            await (self.ready if listed else self.connected).wait()
            return True
        return False

    @traced(
        "sentinel.forward",
        lambda self, tool, *a, **k: {
            "sentinel.upstream": self.name,
            "sentinel.tool": tool,
            "sentinel.era": self.protocol_version,
        },
    )
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
        principal: str | None = None,
        share: Hashable = None,
        recheck: Callable[[], Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        """``principal``: whose call it is (``callers``: whom the pushes that name no call may reach);
        ``share``: whose share of the ``max_in_flight`` slots it uses (``fair_slots.share_of``; None: the
        principal's); ``recheck``: the caller's credentials, asked again once the call has had its turn
        and slot (``caller_recheck.py``: CallerLapsed, the call not sent)."""
        if self._described is not None:
            await self._woken()
        if not self.breaker.allow():
            raise UpstreamUnavailable(
                f"upstream {self.name} is failing; circuit open, retry in {self.breaker.retry_after():.0f}s"
            )
        own = self.slow_calls.get(principal)
        if own is not None and not own.allow():
            self.breaker.probe_not_made()
            raise UpstreamUnavailable(
                f"upstream {self.name}: your calls to it did not answer in time {own.failures} times in a "
                f"row; circuit open for your calls, retry in {own.retry_after():.0f}s"
            )
        if self.client is None and not await self.wait_ready(min(5.0, self.target.connect_timeout),
                                                                listed=False):
            self.breaker.probe_not_made()
            if own is not None:
                own.probe_not_made()
            raise UpstreamUnavailable(
                f"upstream {self.name} is not connected ({self.state}; {self.last_error or 'starting'})"
            )
        if self._serialized(input_responses is None and request_state is None):
            # the calls of one client overlap, other callers wait (party_turns.py); "concurrent": false in
            # the config: one call at a time, whoever calls
            strict = getattr(self.target, "concurrent", None) is False
            party = link.party if link is not None and not strict else None
            async with self._turns.turn(party, principal):
                return await self._in_slot(
                    tool, arguments, link, progress, input_responses, request_state, meta, timeout,
                    principal=principal, share=principal if share is None else share, recheck=recheck,
                )
        return await self._in_slot(
            tool, arguments, link, progress, input_responses, request_state, meta, timeout,
            principal=principal, share=principal if share is None else share, recheck=recheck,
        )

    def _call_timed_out(self, principal: str | None) -> None:
        """A call that did not answer in time: its principal's breaker counts it (``slow_call_breakers``);
        the upstream's is left as it was (a probe it let through may be made by another call)."""
        self.slow_calls.of(principal).record_failure()
        self.breaker.probe_not_made()

    def _call_failed(self, principal: str | None) -> None:
        """The connection failed during the call: the upstream's breaker counts it, for everyone."""
        self.breaker.record_failure()
        own = self.slow_calls.get(principal)
        if own is not None:
            own.probe_not_made()

    def _call_answered(self, principal: str | None) -> None:
        self.breaker.record_success()
        self.slow_calls.settle(principal)

    async def _in_slot(
        self, *call: Any, principal: str | None, share: Hashable, recheck: Callable[[], Any] | None
    ) -> CallToolResult | InputRequiredResult:
        """``_call`` within the upstream's ``max_in_flight``: a call past it (or past its principal's share,
        fair_slots.py) waits for a slot, at most its ``timeout``, and is then refused without reaching the
        upstream."""
        slots = self._slots
        if slots is None:
            recheck_caller(recheck)  # after its party's turn (``call_tool``): every call's one check
            return await self._call(*call, principal=principal)
        if not slots.try_take(share):
            wait = call[-1] or self.target.timeout
            self.waiting_for_slot += 1
            try:
                with anyio.move_on_after(wait) as scope:
                    await slots.take(share)
            finally:
                self.waiting_for_slot -= 1
            if scope.cancelled_caught:
                limit = getattr(self.target, "max_in_flight", None)
                raise UpstreamUnavailable(
                    f"upstream {self.name} is busy: {limit} calls to it are running (its max_in_flight) and "
                    f"none ended within {wait:.0f}s"
                )
        try:
            recheck_caller(recheck)  # after the wait: a credential revoked meanwhile sends nothing (the one)
            return await self._call(*call, principal=principal)
        finally:
            slots.give_back(share)

    @property
    def calls_in_flight(self) -> int:
        return len(self._inflight)

    @property
    def waiting_for_turn(self) -> int:
        """Calls waiting for their turn (``_serialized``: another party's calls are running)."""
        return self._turns.waiting

    def _session_gone(self) -> bool:
        """A streamable-HTTP upstream answered 404 on this connection's session (it restarted, or ended the
        session): the SDK's client would go on asking on it; a new connection starts a new session."""
        return self._session is not None and self._session.gone

    def _serialized(self, plain: bool) -> bool:
        """Whether this call takes turns with other callers' calls. A handshake-era upstream's pushed
        questions over stdio (and SSE) name no call, so they are routed only while the calls in flight are one
        party's; a lean call reads the upstream's requests on its own stream and answers them for itself, so
        it runs beside others. ``"concurrent"`` in the config says either way for every call."""
        # a built-in's direct calls exist only on a handshake-era connection (``direct_path``): not asked
        # again through the five properties down to the session's version (issue 21)
        if self.direct is None and self.modern:
            return False
        concurrent = getattr(self.target, "concurrent", None)
        if concurrent is not None:
            return not concurrent
        lean = self.lean
        return not (plain and lean is not None and lean.own_stream and lean.usable(self.client))

    async def _call(
        self,
        tool: str,
        arguments: dict[str, Any],
        link: CallerLink | None,
        relay: Callable[[float, float | None, str | None], Awaitable[None]] | None,
        input_responses: dict[str, Any] | None,
        request_state: str | None,
        meta: dict[str, Any] | None,
        timeout: float | None,
        *,
        principal: str | None,
    ) -> CallToolResult | InputRequiredResult:
        client = self.client
        if client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        self.callers.called(principal)  # before it goes out: a push from now on may be this call's
        self._next_call += 1
        call_id = self._next_call
        flight = self._inflight[call_id] = _InFlight(link := link or CallerLink(), who=principal)
        token = CURRENT_LINK.set(link)
        idle = timeout or self.target.timeout
        longest = max(idle, getattr(self.target, "max_call_seconds", idle))
        loop = running_loop()
        started = loop.time()
        # one deadline for both ends of a call from outside: no answer in time (moved by every progress
        # notification, never past the call's longest run), and ``_on_garbage`` (due at once). Armed only if
        # the call waits (step_deadline.py): an in-process built-in's call mostly never does
        deadline = StepDeadline(started + idle, latest=started + longest, since=started)

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            if not math.isfinite(progress) or (total is not None and not math.isfinite(total)):
                return  # NaN or an infinity, no JSON: dropped as malformed, as the lean readers drop it
            if flight.garbage is None:  # once ended by garbage, it stays ended
                try:
                    deadline.reschedule(min(loop.time() + idle, started + longest))
                except RuntimeError:
                    pass  # a notification after the call ended or timed out: no deadline left to move
            if relay is None:  # its client asked for none: it reaches no one (notice_budget.py)
                self.notice_budget.spend()
                return
            to = relay  # in order with the call's log lines, never holding the reader up
            said = message[:PROGRESS_MESSAGE_CHARS] if isinstance(message, str) else message
            if said and not self.builtin:  # shown to the user as a result's text is to the model
                said = attributed_line(said, self.name)
            self.notices.put(flight, "progress", lambda: to(progress, total, said), who=flight.who)

        async def step() -> Any:
            lean = self.lean
            if lean is not None and input_responses is None and request_state is None and (
                lean.usable(client)
            ):
                flight.streamed = isinstance(lean, LeanCaller)
                return await lean.call_tool(
                    tool, arguments, meta, self._on_log, on_progress, self._on_message
                )
            direct = self.direct
            if direct is not None and direct.serves(client.session, tool):
                # a built-in's direct call, in this task: under this deadline (never moved past ``longest``),
                # so the read timeout below (5 s later still) needs no timer of its own
                return await direct.call_tool(
                    tool, arguments, longest + 5, on_progress, input_responses=input_responses,
                    request_state=request_state, meta=meta, allow_input_required=True, within=deadline)
            return await client.session.call_tool(
                tool,
                arguments,
                read_timeout_seconds=longest + 5,
                progress_callback=on_progress,
                input_responses=input_responses,
                request_state=request_state,
                meta=cast("RequestParamsMeta | None", meta),
                allow_input_required=True,
            )

        result: Any = None
        try:
            try:
                flight.deadline = deadline
                result = await deadline.run(step)
                switched = self._session.other if self._session is not None else None
                if switched is not None:  # answered under another session: whose state it holds is unknown
                    log.warning("upstream %s answered under another session id (%.40r): its answer refused, "
                                "reconnecting", self.name, switched)
                    raise MCPError(INVALID_REQUEST, "Session terminated")
            except TimeoutError:
                if not deadline.expired:
                    raise  # not ours
                if flight.garbage is None:  # not ended by _on_garbage (below)
                    self._call_timed_out(principal)
                    ran = loop.time() - started
                    why = (
                        f"did not answer within {idle:.0f}s (and reported no progress)"
                        if ran < longest - 0.01
                        else f"was still running after {longest:.0f}s (its longest call)"
                    )
                    raise UpstreamCallError(
                        f"upstream {self.name} {why}", timeout=True, code=REQUEST_TIMEOUT
                    ) from None
            if flight.garbage is not None and result is None:
                self._call_failed(principal)
                raise UpstreamCallError(
                    f"upstream {self.name} answered with an invalid message ({flight.garbage})"
                )
        except MCPError as e:
            if e.code == REQUEST_TIMEOUT:
                self._call_timed_out(principal)
                raise UpstreamCallError(
                    f"upstream {self.name} did not answer within {longest:.0f}s", timeout=True, code=e.code
                ) from None
            closed = e.code == CONNECTION_CLOSED or "connection closed" in e.message.lower()
            if closed or self._session_gone():
                self._call_failed(principal)
                self.last_error = "connection closed during a call"
                self._dead.set()
                # the reason the lean tap gave, when it ended the connection itself (an overlong line)
                opening = "Connection closed ("
                why = e.message[len(opening) : -1] if e.message.startswith(opening) else ""
                cause = f" ({why})" if why.startswith("the upstream ") else ""
                raise UpstreamCallError(
                    f"upstream {self.name} went away during the call{cause}; reconnecting", code=e.code
                ) from None
            # a JSON-RPC error answer (unknown tool, invalid params...): the upstream itself is healthy. Its
            # message is quoted in Sentinel's own result and in the audit row: bounded and shown safely (it
            # was the upstream's whole message, megabytes a call on the SDK's path, terminal escapes and all)
            self._call_answered(principal)
            raise UpstreamCallError(
                compose(f"upstream {self.name} error {e.code}: ", safe_text(e.message, MESSAGE_LIMIT)),
                code=e.code,
            ) from None
        except ValidationError as e:
            # the SDK's client parses the answer into the era's result types and raises pydantic's error for
            # one that does not fit: an answer like any other bad answer, said as the lean path says it
            self._call_answered(principal)
            raise UpstreamCallError(
                f"upstream {self.name} error {PARSE_ERROR}: upstream result is not a valid tools/call "
                f"result: {str(e)[:300]}",
                code=PARSE_ERROR,
            ) from None
        except ResultRefused:  # an answer, read whole: the upstream and its connection are fine
            self._call_answered(principal)
            raise
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream) as e:
            self._call_failed(principal)
            self._dead.set()
            raise UpstreamCallError(f"upstream {self.name} connection lost: {type(e).__name__}") from None
        finally:
            CURRENT_LINK.reset(token)
            self._inflight.pop(call_id, None)
            if flight in self.notices:
                if isinstance(sys.exc_info()[1], asyncio.CancelledError):
                    self.notices.drop(flight)  # the call is gone: nobody to tell
                else:  # its log lines and progress before its answer (or its error: they may say why)
                    await self.notices.flush(flight)
        self._call_answered(principal)
        if isinstance(result, (CallToolResult, InputRequiredResult)):
            return result
        raise UpstreamCallError(
            f"upstream {self.name} returned an unexpected result type {type(result).__name__}"
        )

    async def read_resource(self, uri: str, meta: dict[str, Any] | None = None) -> Any:
        if not self.loaded:
            await self._woken()
        if self.client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        if meta is None:
            return await self.client.session.read_resource(uri)
        return await self.client.session.read_resource(uri, meta=cast("RequestParamsMeta", meta))

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> Any:
        if not self.loaded:
            await self._woken()
        if self.client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        return await self.client.session.get_prompt(name, arguments)

    async def complete(
        self, ref: Any, argument: dict[str, str], context: dict[str, dict[str, str]] | None
    ) -> CompleteResult:
        if not self.loaded:
            await self._woken()
        if self.client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        return await self.client.session.complete(
            ref, argument, context_arguments=(context or {}).get("arguments")
        )


def _garbage_text(error: Exception) -> str:
    """What was wrong with it, short: a validation error's first problem (``Invalid JSON: recursion limit
    exceeded at line 1 column 3933``) rather than the model's name, which the first 200 characters held."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
            return f"{type(error).__name__}: {str(first.get('msg', ''))[:200]}"
        except Exception:  # noqa: BLE001 - any other shape: the plain text below
            pass
    return f"{type(error).__name__}: {str(error)[:200]}"
