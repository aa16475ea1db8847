"""A session's mirror reloaded between a decision's fetch and its next pass loses nothing the fetch taught.

The mirror of a conversation is dropped and loaded again from the store when another conversation pushes it
out (``max_sessions``), when the operator clears a kept fact (``follow_clears``) and when a replica changed it
(``_follow``): each at any moment, also while a decision waits for its look-ups. A decision that fetched
what its guard needs then proved its next pass on a mirror that no longer held it ("... did not tell (not
fetched)"): a call that should have been asked was denied (tests/retail under load: 3-8 of 184).
The reload is forced here by a hook on the look-up itself, after the upstream answered: no sleeps.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from tests.policy.policy_rig import rig

from sentinel_mcp.core.decision import Ask, Deny, argument_digest
from sentinel_mcp.core import process_clock
from sentinel_mcp.policy.fact_rows import Fact, learned
from sentinel_mcp.policy.kept_clears import clear
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE
from sentinel_mcp.policy.mirror_writes import MirrorWrites

pytestmark = pytest.mark.timeout(60)

CALL = ("bk__cancel_booking", {"booking_id": "BK-789"})


def _hooked(port: Any, after_fetch: Callable[[str], Awaitable[None]]) -> list[str]:
    """Run ``after_fetch(tool)`` as the upstream answers a call (before anything learns from its result)."""
    plain = port.client.call_tool
    seen: list[str] = []

    async def call_tool(name: str, arguments: dict[str, Any], *a: Any, **kw: Any) -> Any:
        out = await plain(name, arguments, *a, **kw)
        seen.append(name)
        await after_fetch(name)
        return out

    port.client.call_tool = call_tool
    return seen


async def test_a_clear_between_the_fetch_and_the_next_pass(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        text = "certificate_sent(fl_1)"
        await r.guard.store.add([Fact(session=KEPT_SCOPE, predicate="certificate_sent", args=["fl_1"],
                                      fact=text, provenance="observed")])
        await k.follow_clears()  # the first look: the baseline

        async def cleared(tool: str) -> None:  # the operator's clear, seen by the store's upkeep
            if tool == "get_booking":
                assert await clear(r.guard.store, text, by="operator") is not None
                await k.follow_clears()
                assert not k.is_loaded("s1")

        seen = _hooked(r.port, cleared)
        d = await r.guard.decide(r.port.call_of(*CALL))
        assert "get_booking" in seen
        assert isinstance(d, Ask), d  # the status fetched stands: the user's yes is what is missing


async def test_an_eviction_between_the_fetch_and_the_next_pass(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        k.max_sessions = 1

        async def other(tool: str) -> None:  # another conversation is loaded: "s1" is pushed out
            if tool == "get_booking":
                await k.ensure("other", r.guard.rulebases.active)
                assert not k.is_loaded("s1")

        seen = _hooked(r.port, other)
        d = await r.guard.decide(r.port.call_of(*CALL))
        assert "get_booking" in seen
        assert isinstance(d, Ask), d


async def test_a_reload_never_allows_more(tmp_path: Path) -> None:
    """A fact the store no longer holds is not in the reloaded mirror: the decision stands on the store."""
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        k.max_sessions = 1
        r.state["bookings"]["BK-789"]["status"] = "pending"

        async def other(tool: str) -> None:
            if tool == "get_booking":
                await k.ensure("other", r.guard.rulebases.active)

        _hooked(r.port, other)
        d = await r.guard.decide(r.port.call_of(*CALL))
        assert isinstance(d, Deny) and "only confirmed bookings can be cancelled" in d.unmet, d


async def test_a_write_of_the_session_during_its_load(tmp_path: Path) -> None:
    """The store read by a load, then a write of the session (a read of the booking answered with an error:
    what it said before is deleted), then the load's mirror: it kept the status the store no longer held, and
    a cancellation the upstream no longer allows was asked for (allowed more). Loaded again, the status is
    fetched again and the call denied."""
    async with rig(tmp_path / "facts.db") as r:
        k, rb = r.guard.knowledge, r.guard.rulebases.active
        assert isinstance(await r.guard.decide(r.port.call_of(*CALL)), Ask)
        k.max_sessions = 1
        await k.ensure("other", rb)  # "s1" is pushed out
        r.state["bookings"]["BK-789"]["status"] = "pending"
        store, plain = r.guard.store, r.guard.store.contexts
        raced: list[str] = []
        digest = argument_digest({"booking_id": "BK-789"})

        async def contexts(session: str) -> Any:  # the store has been read: a write lands here
            out = await plain(session)
            if session == "s1" and not raced:
                raced.extend(await store.taught_by("s1", "bk__get_booking", digest))
                await k.unlearn("s1", "bk__get_booking", digest)
            return out

        store.contexts = contexts  # type: ignore[method-assign]
        d = await r.guard.decide(r.port.call_of(*CALL))
        assert raced and r.state["calls"]["get_booking"] == 2  # fetched again
        assert isinstance(d, Deny) and "only confirmed bookings can be cancelled" in d.unmet, d


async def test_facts_learned_during_a_load_are_in_its_mirror(tmp_path: Path) -> None:
    """A look-up's facts learned after a load read the store and before it replaced the mirror: the mirror
    missed them (the store held them), so a pass after that look-up was denied "(not fetched)"."""
    async with rig(tmp_path / "facts.db") as r:
        k, rb = r.guard.knowledge, r.guard.rulebases.active
        store, plain = r.guard.store, r.guard.store.contexts
        text = "booking_status('BK-456',confirmed)"
        raced: list[str] = []

        async def contexts(session: str) -> Any:
            out = await plain(session)
            if session == "s1" and not raced:
                raced.append(session)
                facts = learned("s1", "bk__get_booking", argument_digest({"booking_id": "BK-456"}),
                                [{"predicate": "booking_status", "args": ["BK-456", "confirmed"],
                                  "fact": text, "ttl": 60}], process_clock.now())
                await k.learn(facts)
            return out

        store.contexts = contexts  # type: ignore[method-assign]
        mod = await k.ensure("s1", rb)
        assert raced
        assert [f.fact for f in await store.valid("s1", predicate="booking_status")] == [text]
        assert await k.engine.retract(mod, "booking_status('BK-456', _)") == [text]  # in the mirror


async def test_what_a_load_sees_of_the_writes_of_its_session() -> None:
    w = MirrorWrites(max_sessions=4)
    before = w.mark(["s", KEPT_SCOPE])
    held = w.begin(("s",))
    assert w.mark(["s"]) is None and w.mark(["t"]) is not None  # in flight: no load is taken as whole
    waited = asyncio.ensure_future(w.idle(["t", "s"]))
    await asyncio.sleep(0)
    assert not waited.done()
    w.end(held)
    await asyncio.wait_for(waited, 5)
    assert w.mark(["s", KEPT_SCOPE]) != before  # ended since: a load across it is done again
    for i in range(8):  # bounded: the least recently written go, and read as never written
        w.end(w.begin({f"x{i}", f"y{i}"}))
    assert len(w._touched) == 4 and not w._busy and not w._idle
