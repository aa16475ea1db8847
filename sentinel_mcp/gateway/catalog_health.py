"""What the floors above the engine may know of the upstreams and the catalog: a read-only view.

``/healthz``, ``/metrics``, the start-up banner, the console's upstreams page and a candidate policy's replay
report on the upstreams and look tools up; none of them connects, calls, adds or withdraws anything. So they
get snapshots (``UpstreamHealth``, plain frozen data) and lookups (``route``, ``upstream_of``) through
``Runtime.catalog_health``, and the ``UpstreamManager`` stays the engine's (``tests/engine`` holds that the
application floor and the console do not reach it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sentinel_mcp.gateway.catalog import ToolRoute
from sentinel_mcp.gateway.upstream import Upstream
from sentinel_mcp.gateway.upstream_manager import UpstreamManager


@dataclass(frozen=True, slots=True)
class UpstreamHealth:
    name: str
    state: str  # starting, ready, reconnecting, stopped (``upstream.STATES``)
    protocol: str | None  # the protocol version it speaks (None before it is known)
    tools: int  # how many tools it offers
    breaker: str  # its circuit breaker: closed, open, half-open
    reconnects: int
    last_error: str | None
    loaded: bool  # False: a built-in served from its description, not built yet
    listing_problem: str | None = None  # its last listing passed a bound (upstream_listing.py)
    calls_in_flight: int = 0  # tool calls sent to it and not yet answered
    calls_waiting: int = 0  # calls waiting for one of its ``max_in_flight`` slots
    calls_waiting_turn: int = 0  # calls waiting while another caller's take their turn (party_turns.py)
    notices_dropped: int = 0  # log lines and progress dropped at the notice queue's bounds, since the start
    pushes_refused: int = 0  # its requests refused at once past ``MAX_PUSHES_WAITING``, since the start
    # its requests of a kind its ``relays`` does not permit (sampling, roots...), refused, since the start
    pushes_not_permitted: int = 0
    updates_unsubscribed: int = 0  # its "updated" notices for URIs nobody subscribed to here, since the start
    pushes_unrouted: int = 0  # its log lines, requests and progress attributed to no call, since the start
    notice_pauses: int = 0  # its reading paused past its budget of notices to no client (notice_budget.py)
    notices_unknown: int = 0  # its notices of a method no client takes, since the start (unfit_notices.py)
    notices_malformed: int = 0  # its notices whose params are not of their method's shape, since the start
    # "per_principal": principals refused a session of their own past max_principals, since the start
    principals_refused: int = 0


class CatalogHealth:
    def __init__(self, manager: UpstreamManager) -> None:
        self._manager = manager

    def upstreams(self) -> list[UpstreamHealth]:
        """Every upstream as it is now, in the order they were added."""
        return [self._with_sessions(up, health) for up, health in zip(self._manager.upstreams.values(), [
            UpstreamHealth(
                name=name,
                state=up.state,
                protocol=up.protocol_version,
                tools=len(up.tools),
                breaker=up.breaker.state,
                reconnects=up.reconnects,
                last_error=up.last_error,
                loaded=up.loaded,
                listing_problem=up.listing_problem,
                calls_in_flight=up.calls_in_flight,
                calls_waiting=up.waiting_for_slot,
                calls_waiting_turn=up.waiting_for_turn,
                notices_dropped=up.notices.dropped,
                pushes_refused=up.pushes_refused,
                pushes_not_permitted=up.pushes_not_permitted,
                updates_unsubscribed=up.updates_unsubscribed,
                pushes_unrouted=up.pushes_unrouted,
                notice_pauses=up.notice_pauses,
                notices_unknown=up.notices_unknown,
                notices_malformed=up.notices_malformed,
            )
            for name, up in self._manager.upstreams.items()
        ])]

    @staticmethod
    def _with_sessions(up: Upstream, health: UpstreamHealth) -> UpstreamHealth:
        """An upstream kept per principal: its counts include its principals' sessions'."""
        if up.principals is None:
            return health
        c = up.principals.counts()
        return replace(
            health, reconnects=health.reconnects + c["reconnects"],
            calls_in_flight=health.calls_in_flight + c["calls_in_flight"],
            calls_waiting=health.calls_waiting + c["waiting_for_slot"],
            calls_waiting_turn=health.calls_waiting_turn + c["waiting_for_turn"],
            notices_dropped=health.notices_dropped + c["notices_dropped"],
            pushes_refused=health.pushes_refused + c["pushes_refused"],
            pushes_not_permitted=health.pushes_not_permitted + c["pushes_not_permitted"],
            updates_unsubscribed=health.updates_unsubscribed + c["updates_unsubscribed"],
            pushes_unrouted=health.pushes_unrouted + c["pushes_unrouted"],
            notice_pauses=health.notice_pauses + c["notice_pauses"],
            notices_unknown=health.notices_unknown + c["notices_unknown"],
            notices_malformed=health.notices_malformed + c["notices_malformed"],
            principals_refused=up.principals.refused,
        )

    @property
    def conflicts(self) -> list[str]:
        """Tools withheld because they would shadow another's name (a copy: health says so)."""
        return list(self._manager.catalog.conflicts)

    @property
    def problems(self) -> list[str]:
        """What health reports of the catalog: its conflicts, each upstream's refused listing, the tools held
        because their upstream changed them since they were pinned."""
        listings = [up.listing_problem for up in self._manager.upstreams.values() if up.listing_problem]
        catalog = self._manager.catalog
        pins = [catalog.pins.problem] if catalog.pins is not None and catalog.pins.problem else []
        return [*self.conflicts, *listings, *pins, *catalog.held.values()]

    @property
    def held_count(self) -> int:
        """Tools held because their upstream changed them since they were pinned (the owner's to review)."""
        return len(self._manager.catalog.held)

    @property
    def tool_count(self) -> int:
        return len(self._manager.catalog.tools)

    def route(self, exposed: str) -> ToolRoute | None:
        """Where an exposed tool name leads (frozen: the upstream, its own name, the Tool as exposed)."""
        return self._manager.catalog.route(exposed)

    def upstream_of(self, exposed: str) -> str | None:
        route = self._manager.catalog.route(exposed)
        return route.upstream if route is not None else None
