"""An upstream configured ``isolation: "per_principal"``: each principal's calls reach a session of its own.

An upstream that keeps state per MCP session or per client (a browser's logged-in cookies, a shell's working
directory, a "current user") would otherwise share it among every principal: bob's call could act in
alice's logged-in browser. Here each principal gets its own ``Upstream`` on the same target (over stdio its
own process, over HTTP its own MCP session on its own connection), opened lazily on its first call and
supervised like any upstream (reconnect on death, its own breaker, timeouts and result bounds, its pushes
reaching its own callers, audited under the server's name). At most ``max_principals`` are open at once:
one more principal is refused with the reason, never queued. One unused for ``principal_idle_seconds`` is
closed (its process ended); that principal's next call opens a new one, with none of the old state.
A session closed but still ending its process counts against the bound: a newcomer waits for it to end (at
most ``connect_timeout``), so the processes alive never outnumber ``max_principals``.
The principal ``anonymous`` (every caller under ``"auth": "none"``) and Sentinel's own calls (``sentinel``)
are refused: each one's session would be shared by many callers; so is a name out of ``PRINCIPAL_NAME``'s
shape.

The configured ``Upstream`` keeps its own session for the catalog (tools, resources, prompts are listed
once, from it) and carries no principal's call. ``tools/call``, ``resources/read``, ``prompts/get``,
``completion/complete`` and ``resources/subscribe`` take the principal's session (its resource updates go to
that principal's subscribers only: ``front_utilities.py``). A session holding a subscription is not idle.
"""

from __future__ import annotations

import logging
import re
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable, TypeVar

import anyio

from sentinel_mcp.config import PRINCIPAL_NAME
from sentinel_mcp.gateway.upstream_client import UpstreamUnavailable
from sentinel_mcp.identity.principal import ANONYMOUS_NAME, INTERNAL_NAME

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import Upstream

log = logging.getLogger(__name__)
T = TypeVar("T")

STOP_WAIT_SECONDS = 10.0  # at shutdown, how long the sessions' supervisors get to end their processes
# what health and /metrics count per upstream, summed over its principals' sessions (and those closed: a
# counter never goes back)
COUNTERS = ("reconnects", "pushes_refused", "pushes_not_permitted", "updates_unsubscribed", "pushes_unrouted",
            "notice_pauses", "notices_unknown", "notices_malformed")
GAUGES = ("calls_in_flight", "waiting_for_slot", "waiting_for_turn")


@dataclass(eq=False)
class _Own:
    up: "Upstream"
    used: float  # monotonic time of the last call's end (or start)
    busy: int = 0  # calls running on it: never closed under them
    ended: anyio.Event = field(default_factory=anyio.Event)  # its supervisor returned


class PrincipalSessions:
    def __init__(self, name: str, limit: int, idle: float, connect_timeout: float,
                 spawn: Callable[[str], "Upstream"]) -> None:
        self.name = name
        self.connect_timeout = connect_timeout
        self.limit = limit
        self.idle = idle
        self._spawn = spawn  # a new, not yet running ``Upstream`` for one principal
        self._own: dict[str, _Own] = {}
        self._ending: set[_Own] = set()  # closed, their supervisors still ending their processes
        self._one_ended = anyio.Event()  # set (and replaced) each time one of ``_ending`` has ended
        self._tg: anyio.abc.TaskGroup | None = None
        self.refused = 0  # principals turned away past ``limit``
        self._retired = dict.fromkeys((*COUNTERS, "notices_dropped"), 0)  # counted by sessions now closed

    def open(self) -> dict[str, "Upstream"]:
        """The sessions open now, by principal."""
        return {who: own.up for who, own in self._own.items()}

    def counts(self) -> dict[str, int]:
        """``COUNTERS`` (with ``notices_dropped``) since the start and ``GAUGES`` now, over every session."""
        out = dict(self._retired)
        for what in GAUGES:
            out[what] = 0
        for own in self._own.values():
            for what in (*COUNTERS, *GAUGES):
                out[what] += getattr(own.up, what)
            out["notices_dropped"] += own.up.notices.dropped
        return out

    def _retire(self, own: _Own) -> None:
        for what in COUNTERS:
            self._retired[what] += getattr(own.up, what)
        self._retired["notices_dropped"] += own.up.notices.dropped

    async def run(self, supervise: Callable[[], Awaitable[None]]) -> None:
        """Run the catalog's own supervisor (``supervise``) with the principals' sessions beside it; when it
        ends (the upstream stopped), stop them all and let them end their processes."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._idle_loop)
            try:
                await supervise()
            finally:
                self._tg = None
                self._one_ended.set()  # a newcomer waiting for a session to end hears it is stopped
                closing = list(self._own.values())
                self._own.clear()
                for own in closing:
                    self._retire(own)
                for own in closing:
                    await own.up.stop()
                with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_WAIT_SECONDS):
                    for own in closing:
                        await own.ended.wait()
                tg.cancel_scope.cancel()

    @asynccontextmanager
    async def session(self, principal: str | None) -> AsyncIterator["Upstream"]:
        """``principal``'s own session, opened on its first call; never closed while this holds it."""
        own = await self._claim(principal)
        own.busy += 1
        try:
            if own.up.client is None:  # opened just now (or reconnecting): every method waits as a call does
                await own.up.wait_ready(self.connect_timeout, listed=False)
            yield own.up
        finally:
            own.busy -= 1
            own.used = time.monotonic()

    async def _claim(self, principal: str | None) -> _Own:
        if not principal:  # whose session it would be is unknown: no one's is lent
            raise UpstreamUnavailable(
                f"upstream {self.name} keeps a session per principal; a call naming no principal is refused"
            )
        # "auth": "none" makes every caller the one principal anonymous (a reserved name no configured
        # principal takes): its session would be shared by all of them, what per_principal is to prevent
        if principal == ANONYMOUS_NAME:
            raise UpstreamUnavailable(
                f"upstream {self.name} keeps a session per principal; an unauthenticated caller (auth "
                f'"none": every caller is the one principal {ANONYMOUS_NAME}) would share one with every '
                f"other, so it is refused"
            )
        # Sentinel itself (a built-in's or the solver's call naming no one) runs for every principal in turn:
        # one session of its own would carry each one's state to the next. Any other name must be one a
        # configured principal could have (``PRINCIPAL_NAME``): one out of that shape is no one's
        if principal == INTERNAL_NAME or not re.fullmatch(PRINCIPAL_NAME, principal):
            raise UpstreamUnavailable(
                f"upstream {self.name} keeps a session per principal; a call that is no configured "
                f"principal's own (Sentinel's, or of an unknown caller) is refused"
            )
        deadline = anyio.current_time() + self.connect_timeout
        while True:
            own = self._own.get(principal)
            if own is not None:
                own.used = time.monotonic()
                return own
            tg = self._tg
            if tg is None:
                raise UpstreamUnavailable(f"upstream {self.name} is stopped")
            if len(self._own) >= self.limit:
                self.refused += 1
                raise UpstreamUnavailable(
                    f"upstream {self.name} already holds sessions for {self.limit} principals (its "
                    f"max_principals), each its own; a new principal is admitted once one of them has been "
                    f"idle for {self.idle:g}s"
                )
            if len(self._own) + len(self._ending) < self.limit:
                break
            # the bound is reached only by sessions closed and still ending their processes: a new one
            # started now would run beside them, one more than the bound
            with anyio.move_on_after(deadline - anyio.current_time()):
                await self._one_ended.wait()
                continue
            self.refused += 1
            raise UpstreamUnavailable(
                f"upstream {self.name} is still ending the processes of principal sessions it closed (its "
                f"max_principals is {self.limit}); a new principal is admitted once they have ended"
            )
        own = self._own[principal] = _Own(self._spawn(principal), time.monotonic())
        tg.start_soon(self._supervise, principal, own, name=f"upstream:{self.name}:principal")
        log.info("upstream %s: opened a session for a principal (%d open)", self.name, len(self._own))
        return own

    async def _supervise(self, principal: str, own: _Own) -> None:
        try:
            await own.up.run()
        finally:
            own.ended.set()
            if own in self._ending:
                self._ending.discard(own)
                self._one_ended.set()
                self._one_ended = anyio.Event()
            if self._own.get(principal) is own:  # ended on its own: the next call opens a new one
                del self._own[principal]
                self._retire(own)

    async def close_idle(self, now: float) -> None:
        """Close every session no call holds that was last used ``idle`` seconds before ``now``."""
        for who, own in list(self._own.items()):
            # one holding a subscription is in use: closed, its principal would silently hear of no update
            if (own.busy == 0 and not own.up.subscribed and now - own.used >= self.idle
                    and self._own.get(who) is own):
                del self._own[who]
                self._retire(own)
                self._ending.add(own)
                await own.up.stop()
                log.info("upstream %s: closed an idle principal session (%d open)", self.name, len(self._own))

    async def _idle_loop(self) -> None:
        while True:
            await anyio.sleep(min(self.idle / 2, 30.0))
            await self.close_idle(time.monotonic())


async def on_own_session(up: "Upstream", principal: str | None,
                         use: Callable[["Upstream"], Awaitable[T]]) -> T:
    """``use`` on ``principal``'s own session of ``up`` when it keeps one per principal, else on ``up``."""
    if up.principals is None:
        return await use(up)
    async with up.principals.session(principal) as own:
        return await use(own)
