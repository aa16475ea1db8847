"""Facts: TTL expiry re-fetches, facts survive a store reopen, slow needs are fetched concurrently."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.policy.policy_rig import BOOKINGS_PL, rig

from sentinel_mcp.core.decision import Ask, Deny
from sentinel_mcp.policy.fact_store import FactStore

pytestmark = pytest.mark.timeout(60)


async def test_expired_fact_is_fetched_again(tmp_path: Path) -> None:
    short = tmp_path / "short.pl"
    short.write_text(BOOKINGS_PL.read_text().replace("extract([S = '/status']), [ttl(60)]",
                                                     "extract([S = '/status']), [ttl(1)]"))
    async with rig(tmp_path / "facts.db", files=[short]) as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        assert isinstance(await r.guard.decide(call), Ask)
        assert r.state["calls"]["get_booking"] == 1
        assert isinstance(await r.guard.decide(call), Ask)
        assert r.state["calls"]["get_booking"] == 1  # still valid: used from the store
        r.state["bookings"]["BK-789"]["status"] = "pending"  # changes upstream; the stored fact is stale
        await asyncio.sleep(1.2)  # let the 1 s TTL pass
        d = await r.guard.decide(call)
        assert r.state["calls"]["get_booking"] == 2  # fetched again
        assert isinstance(d, Deny) and "only confirmed bookings can be cancelled" in d.unmet
        # the purge removes expired rows from the store
        await asyncio.sleep(1.2)
        assert await r.guard.knowledge.purge() >= 1


async def test_two_slow_needs_are_in_flight_at_once(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db", delay=0.4) as r:
        d = await r.guard.decide(
            r.port.call_of("bk__merge_bookings", {"first": "BK-789", "second": "BK-456"})
        )
        assert isinstance(d, Ask)  # both statuses fetched, then the user's yes is needed
        windows = {
            f.args[0]: (f.args[1], f.args[2])
            for f in await r.guard.store.valid("s1")
            if f.predicate == "booking_window"
        }
        assert set(windows) == {"BK-789", "BK-456"}
        (s1, e1), (s2, e2) = windows["BK-789"], windows["BK-456"]
        # the server's own start/end times overlap: the second started before the first ended
        assert s1 < e2 and s2 < e1, windows


async def test_facts_survive_a_store_reopen(tmp_path: Path) -> None:
    db = tmp_path / "facts.db"
    async with rig(db) as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        assert isinstance(await r.guard.decide(call), Ask)
        assert r.state["calls"] == {"list_bookings": 1, "get_booking": 1}
    async with FactStore(db) as store:
        preds = {f.predicate for f in await store.valid("s1")}
        assert {"current_user", "user_booking", "booking_status"} <= preds
        assert {f.provenance for f in await store.valid("s1", predicate="booking_status")} == {"observed"}
        src = (await store.valid("s1", predicate="booking_status"))[0]
        assert src.source_tool == "bk__get_booking" and src.source_digest
    async with rig(db) as r2:  # a new guard, a new server: the stored facts are used, nothing is fetched
        d = await r2.guard.decide(r2.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}))
        assert isinstance(d, Ask)
        assert r2.state["calls"] == {}


async def test_sessions_are_isolated(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id="a"))
        n = dict(r.state["calls"])
        await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id="b"))
        assert r.state["calls"]["get_booking"] == n["get_booking"] + 1  # session b fetched its own facts
        assert not [f for f in await r.guard.store.valid("c") if not f.internal]


async def test_concurrent_writes_to_the_store(tmp_path: Path) -> None:
    from sentinel_mcp.policy.fact_store import Fact

    async with FactStore(tmp_path / "f.db") as store:

        def fact(i: int) -> Fact:
            return Fact(session="s", predicate="p", args=[i], fact=f"p({i})", provenance="observed")

        await asyncio.gather(
            *(store.add([fact(i)]) for i in range(40)), *(store.valid("s") for _ in range(10))
        )
        assert await store.count("s") == 40


async def test_evicted_sessions_come_back_from_the_store(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        r.guard.knowledge.max_sessions = 2
        for s in ("a", "b", "c"):  # loading "c" evicts "a" from the engine
            await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id=s))
        assert "a" not in r.guard.knowledge._loaded
        calls = dict(r.state["calls"])
        d = await r.guard.decide(
            r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id="a")
        )
        assert isinstance(d, Ask) and r.state["calls"] == calls  # reloaded from the store, nothing fetched


async def test_purge_while_sessions_load(tmp_path: Path) -> None:
    """Sessions loading while a purge awaits the engine: the purge completes (it once raised mid-way, so
    expired facts stayed in the engine) and every decision stands."""
    async with rig(tmp_path / "facts.db") as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        assert isinstance(await r.guard.decide(call), Ask)

        async def purges() -> list[int]:
            return [await r.guard.knowledge.purge() for _ in range(20)]

        decisions = [
            r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id=f"s{i}"))
            for i in range(2, 14)
        ]
        done = await asyncio.gather(purges(), *decisions)
        assert all(isinstance(n, int) for n in done[0])
        assert all(isinstance(d, Ask) for d in done[1:])


async def test_observe_leaves_a_fresh_session_alone_unless_it_has_something_to_do(tmp_path: Path) -> None:
    """After a call of a tool no binding reads and no effect names, in a conversation the decision did not
    load,
    observing it loads nothing and writes nothing (the hot path's cost); a stored confirmation of that exact
    call is still consumed, and a binding's read still teaches facts."""
    from mcp.types import CallToolResult, TextContent

    async with rig(tmp_path / "facts.db") as r:
        ok = CallToolResult(content=[TextContent(type="text", text="{}")])
        merge = r.port.call_of("bk__merge_bookings", {"first": "BK-1", "second": "BK-2"}, session_id="fresh")
        await r.guard.observe(merge, ok)
        assert not r.guard.knowledge.is_loaded("fresh") and await r.guard.store.count("fresh") == 0
        # a confirmation of exactly this call, stored earlier (say, by another gateway on this data dir)
        stored = r.port.call_of("bk__merge_bookings", {"first": "BK-1", "second": "BK-2"}, session_id="held")
        async with FactStore(tmp_path / "facts.db") as other:
            fact = await r.guard.knowledge.fact_of_text(
                "held",
                f"'$confirmed'('bk__merge_bookings', '{stored.digest}', v, '{'0' * 64}', yes)",
                "user",
                source_tool=stored.identity,
                source_digest=stored.digest,
            )
            await other.add([fact])
        assert await r.guard.store.has_confirmation("held", stored.identity, stored.digest)
        await r.guard.observe(stored, ok)
        assert not await r.guard.store.has_confirmation(
            "held", stored.identity, stored.digest
        )  # one call, one use
        # a binding's read in a fresh conversation still teaches its facts
        read = r.port.call_of("bk__get_booking", {"booking_id": "BK-789"}, session_id="reader")
        await r.guard.observe(
            read,
            CallToolResult(
                content=[
                    TextContent(
                        type="text", text='{"id": "BK-789", "status": "confirmed", "cabin": "economy"}'
                    )
                ]
            ),
        )
        assert "booking_status" in {f.predicate for f in await r.guard.store.valid("reader")}


async def test_a_decision_makes_at_most_max_fetches_look_ups(tmp_path: Path) -> None:
    """One call whose arguments name more things than ``max_fetches`` is denied before any look-up is made
    (a client must not turn one decision into thousands of upstream calls); at the bound it is decided."""
    async with rig(tmp_path / "facts.db") as r:
        merge = r.port.call_of("bk__merge_bookings", {"first": "BK-789", "second": "BK-456"})
        r.guard.solver.max_fetches = 1
        d = await r.guard.decide(merge)
        assert isinstance(d, Deny) and "look-ups" in d.reason, d
        assert r.state["calls"].get("get_booking", 0) == 0
        r.guard.solver.max_fetches = 2
        assert isinstance(await r.guard.decide(merge), Ask)
        assert r.state["calls"]["get_booking"] == 2


def test_the_bound_is_a_setting() -> None:
    from sentinel_mcp.config import PolicySettings

    assert PolicySettings().max_fetches == 128 and PolicySettings(max_fetches=5).max_fetches == 5
    with pytest.raises(ValueError):
        PolicySettings(max_fetches=0)
