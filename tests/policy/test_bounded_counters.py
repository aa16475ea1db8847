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
            store._note_version(f"s{i}", i + 1)
            assert len(store.versions) <= 4
        assert list(store.versions) == ["s16", "s17", "s18", "s19"]
        store._note_version("s17", 99)  # a change moves the session to the newest end
        assert list(store.versions)[-1] == "s17" and store.versions["s17"] == 99
