"""The guard's per-session bookkeeping stays bounded when every call opens a conversation (issue 21, memory
goal): driven past its bound by count, with real decisions; an evicted session still decides the same."""

from __future__ import annotations

from pathlib import Path

from tests.policy.policy_rig import rig

from sentinel_mcp.core.decision import Ask
from sentinel_mcp.policy import fact_store
from sentinel_mcp.policy.fact_store import FactStore


async def test_change_counters_keep_only_the_latest_sessions(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        k.max_sessions, k.max_counters = 2, 3
        seen: list[int] = []
        for i in range(12):  # four times the bound
            d = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"},
                                                    session_id=f"s{i}"))
            assert isinstance(d, Ask)
            assert len(k.generation) <= 3 and len(k._loaded) <= 2
            seen.append(k.generation[f"s{i}"])
        assert seen == sorted(seen) and len(set(seen)) == len(seen)  # one clock: a value never comes back
        assert "s0" not in k.generation and k.generation.get("s0", 0) == 0
        before = max(k.generation.values())
        again = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"},
                                                    session_id="s0"))
        assert isinstance(again, Ask) and again.reason == d.reason
        assert k.generation["s0"] > before  # reloaded: a newer value than any a stale copy can hold


async def test_shared_store_versions_keep_only_the_latest_sessions(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fact_store, "MAX_VERSIONS", 4)
    async with FactStore(tmp_path / "f.db") as store:
        for i in range(20):
            store._note_version(f"s{i}", i + 1, i)
            assert len(store.versions) <= 4
        assert list(store.versions) == ["s16", "s17", "s18", "s19"]
        store._note_version("s17", 99, 98)  # a change moves the session to the newest end
        assert list(store.versions)[-1] == "s17" and store.versions["s17"] == (99, 98)


async def _prolog_modules(guard) -> int:  # type: ignore[no-untyped-def]
    def count(prolog) -> int:  # type: ignore[no-untyped-def]
        return int(next(iter(prolog.query("statistics(modules, N)", maxresult=1)))["N"])

    return await guard.engine.run(count)


async def test_an_evicted_sessions_module_is_destroyed_and_comes_back_when_used(tmp_path: Path) -> None:
    """Every conversation the engine mirrors gets a module; eviction destroys it (a module only emptied
    stayed, ~1.2 KB each, one a conversation forever). Driven past the bound by count: the engine's module
    count stays put; an evicted session, loaded again, decides the same (on whichever thread decides)."""
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        k.max_sessions = 3
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id="s0")
        first = await r.guard.decide(call)
        assert isinstance(first, Ask)
        await r.guard.decide(call)  # s0 made ready on every thread that decided it
        base = await _prolog_modules(r.guard)
        for i in range(1, 400):
            d = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"},
                                                    session_id=f"s{i}"))
            assert isinstance(d, Ask) and d.reason == first.reason
            assert len(k._loaded) <= 3
        assert await _prolog_modules(r.guard) <= base + 3
        for _ in range(2):  # s0 again: loaded anew, its module made again, the same decision each time
            again = await r.guard.decide(call)
            assert isinstance(again, Ask) and again.reason == first.reason


async def test_a_thread_that_made_a_session_ready_knows_when_its_module_is_gone(tmp_path: Path) -> None:
    """This thread decided s0 last (it remembers s0's module as made); the engine thread then drops s0, which
    destroys its module. The next decision here makes the module again and decides on what it holds (nothing:
    the seeds went too, so the booking is not the current user's), never calls into a module that is gone (a
    guard error); loaded again, the session decides as before."""
    async with rig(tmp_path / "facts.db") as r:
        k = r.guard.knowledge
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}, session_id="s0")
        first = await r.guard.decide(call)
        assert isinstance(first, Ask)
        await r.guard.decide(call)
        await r.guard.engine.drop_session(k.module("s0"))  # on the engine thread, behind the mirror's back
        emptied = await r.guard.decide(call)
        assert "could not be evaluated" not in emptied.reason and "guard_error" not in emptied.unmet, emptied
        k._loaded.pop("s0")  # as an eviction leaves it: loaded again at the next decision
        again = await r.guard.decide(call)
        assert isinstance(again, Ask) and again.reason == first.reason, again


async def test_a_drop_destroys_only_a_session_module_sentinel_made(tmp_path: Path) -> None:
    """Only a module made temporary by new_session_module/1 is destroyed: a drop naming any other module (the
    system's, Sentinel's own, a rulebase's) empties its session facts at most and leaves it whole."""
    async with rig(tmp_path / "facts.db") as r:
        call = r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"})
        assert isinstance(await r.guard.decide(call), Ask)
        others = ["user", "system", "sentinel_core", "sentinel_rt", "lists", r.guard.rulebases.current.module]
        for name in others:  # each holding session facts, so a drop reaches the question of destroying it
            await r.guard.engine.goal(f"dynamic({name}:'$fact'/5)")
        base = await _prolog_modules(r.guard)
        for name in others:
            await r.guard.engine.drop_session(name)
        assert await _prolog_modules(r.guard) == base
        again = await r.guard.decide(r.port.call_of("bk__cancel_booking", {"booking_id": "BK-789"}))
        assert isinstance(again, Ask)
