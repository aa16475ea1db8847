"""All upstreams: started concurrently, supervised independently, one catalog over them.

A slow or broken upstream never blocks the others: each has its own supervisor task; start-up waits for
all of them only up to a bound, then goes on with whatever is ready (the rest join when they connect).
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

import anyio

from sentinel_mcp.core.caller_link import CallOf
from sentinel_mcp.gateway.catalog import Catalog
from sentinel_mcp.gateway.upstream import Target, Upstream, UpstreamHooks

log = logging.getLogger(__name__)

# how long a request an upstream pushes before the gateway's record is open waits for it (the upstreams
# connect while the gateway assembles: a refusal during a handshake is still written before it is answered)
RECORD_WAIT_SECONDS = 60.0
# refusals held waiting for the record at once; past it (a flood of pushes during a handshake) each is
# answered at once and counted by (upstream, kind, cause), written when the record is attached: memory bounded
MAX_REFUSALS_WAITING = 64
# how soon an owner's `sentinel-mcp pins accept`, or a rulebase governing other names, reaches the catalog
PINS_RECHECK_SECONDS = 2.0


class UpstreamManager:
    def __init__(self, on_catalog_changed: Callable[[], Awaitable[None]] | None = None) -> None:
        self.upstreams: dict[str, Upstream] = {}
        self.catalog = Catalog()
        # set by the host once the front exists (the front's fan-out of list_changed)
        self.on_catalog_changed = on_catalog_changed
        # set by the front: notifications that go to the clients that subscribed or were asked
        # (upstream, URI, the principal whose own session of it sent it; None: the upstream's one session)
        self.on_resource_updated: Callable[[str, str, str | None], Awaitable[None]] | None = None
        self.on_elicit_complete: Callable[[str, str, str | None], Awaitable[None]] | None = None
        # set by the gateway: a request an upstream pushed during a call, refused (``push_refusals.py``)
        self._on_push_refused: Callable[[str, str, str, str, CallOf | None], Awaitable[None]] | None = None
        self._record_attached = anyio.Event()
        self.refusals_waiting = 0  # refused pushes held until the gateway's record is attached
        # refused pushes past MAX_REFUSALS_WAITING before the record existed: (upstream, kind, cause) ->
        # [why, how many]
        self._refusals_counted: dict[tuple[str, str, str], list[Any]] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        self._stopping = anyio.Event()
        # during ``run``'s start-up wait: an upstream's listing waits for the one build of the catalog that
        # ends it (each arrival rebuilt it, re-showing every tool and re-reading the pins, with nobody to
        # read it: nothing is served before the gateway is assembled, whose host walks that first listing)
        self.starting = False
        # whether a principal other than the owner may call an upstream (by its name): one principal alone
        # then leaves one of its ``max_in_flight`` slots free for the next (fair_slots.py); set by the host
        self.others_may_call: Callable[[str], bool] = lambda _name: False

    @property
    def on_push_refused(self) -> Callable[[str, str, str, str, CallOf | None], Awaitable[None]] | None:
        return self._on_push_refused

    @on_push_refused.setter
    def on_push_refused(
        self, hook: Callable[[str, str, str, str, CallOf | None], Awaitable[None]] | None
    ) -> None:
        self._on_push_refused = hook
        if hook is not None:  # the refusals pushed before it existed are written now, then answered
            self._record_attached.set()

    def add(self, name: str, target: Target) -> Upstream:
        if name in self.upstreams:
            raise ValueError(f"duplicate upstream name {name!r}")
        up = Upstream(name, target, UpstreamHooks(catalog_changed=self._catalog_changed,
                                                  resource_updated=self._resource_updated,
                                                  elicit_complete=self._elicit_complete,
                                                  push_refused=self._push_refused))
        up.share_slots(self.others_may_call(name))
        self.upstreams[name] = up
        if self._tg is not None:
            self._tg.start_soon(up.run, name=f"upstream:{name}")
        return up

    async def _catalog_changed(self, _up: Upstream | None) -> None:
        if self.starting:
            return
        self.catalog.rebuild(self.upstreams.values())
        if self.on_catalog_changed is not None:
            try:
                await self.on_catalog_changed()
            except Exception:  # noqa: BLE001
                log.exception("catalog change hook failed")

    async def recheck(self) -> None:
        """What the catalog was built on and changes without an upstream saying so: the pins (the owner
        accepted or forgot one with the CLI) and the names the policy governs (a rulebase reloaded, or a
        policy that could not say can again). On a change the catalog is rebuilt and clients told."""
        if self._stopping.is_set():
            return
        pins = self.catalog.pins
        if pins is not None and pins.changed_on_disk():
            try:
                pins.reload()
                await self._catalog_changed(None)
            except Exception:  # noqa: BLE001 - the next check tries again
                log.exception("tool pins: reload failed")
            return
        if self.catalog.governance_moved():
            await self._catalog_changed(None)

    async def _resource_updated(self, up: Upstream, uri: str) -> None:
        if self.on_resource_updated is not None:
            await self.on_resource_updated(up.name, uri, up.principal)

    async def _elicit_complete(self, up: Upstream, elicitation_id: str) -> None:
        if self.on_elicit_complete is not None:
            await self.on_elicit_complete(up.name, elicitation_id, up.principal)

    async def _push_refused(self, up: Upstream, kind: str, cause: str, why: str, call: CallOf | None) -> None:
        hook = self._on_push_refused
        if hook is None and self.refusals_waiting >= MAX_REFUSALS_WAITING:
            counted = self._refusals_counted.setdefault((up.name, kind, cause), [why, 0])
            counted[1] += 1
            return
        if hook is None:  # pushed during a handshake, before the gateway's record exists: it waits for it
            self.refusals_waiting += 1
            try:
                with anyio.move_on_after(RECORD_WAIT_SECONDS):
                    await self._record_attached.wait()
            finally:
                self.refusals_waiting -= 1
            hook = self._on_push_refused
            if hook is None:
                log.error("upstream %r: a %s request refused (%s) before any record was attached: "
                          "not recorded", up.name, kind, cause)
                return
            held, self._refusals_counted = self._refusals_counted, {}
            for (name, k, c), (w, n) in held.items():  # one at a time: push_refusals.py bounds the rows
                for _ in range(n):
                    await hook(name, k, c, w, None)
        await hook(up.name, kind, cause, why, call)

    async def run(self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
                  startup_wait: float = 15.0, all_added: anyio.Event | None = None) -> None:
        """Run every supervisor; reports started once all are ready or ``startup_wait`` has passed.

        ``all_added``: the host adds more upstreams while the first ones connect (they start as they are
        added);
        the start-up wait begins once it is set."""
        self.starting = True
        async with anyio.create_task_group() as tg:
            self._tg = tg
            for name, up in self.upstreams.items():
                tg.start_soon(up.run, name=f"upstream:{name}")
            if all_added is not None:
                await all_added.wait()
            # wait for each upstream's first attempt, never beyond its connect_timeout (nor startup_wait in
            # all):
            # one that cannot start stops the wait at once; a slow one joins later, announced by list_changed
            with anyio.move_on_after(startup_wait):
                started = anyio.current_time()
                for up in list(self.upstreams.values()):
                    left = getattr(up.target, "connect_timeout", startup_wait) - (
                        anyio.current_time() - started
                    )
                    with anyio.move_on_after(max(0.0, left)):
                        await up.settled.wait()
            for up in self.upstreams.values():
                if up.state != "ready":
                    log.warning(
                        "upstream %s not ready at start-up (%s): serving without it for now",
                        up.name,
                        up.last_error or up.state,
                    )
            self.starting = False  # with the rebuild below, nothing awaited between: no listing is missed
            self.catalog.rebuild(self.upstreams.values())
            task_status.started()
            # open until stop(), even with no upstream yet: one added later (add()) starts here
            while not self._stopping.is_set():
                with anyio.move_on_after(PINS_RECHECK_SECONDS):
                    await self._stopping.wait()
                await self.recheck()
        self._tg = None

    async def stop(self) -> None:
        self._stopping.set()
        for up in self.upstreams.values():
            await up.stop()
