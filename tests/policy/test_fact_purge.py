"""The purge of expired facts: exactly the expired facts and their value rows go, in batches of their own
transactions, so a write queued during a long purge (what a call learned) waits for one batch, not for the
whole purge (which once stopped every call for seconds under load)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from sentinel_mcp.policy import fact_store
from sentinel_mcp.policy.fact_store import Fact, FactStore

pytestmark = pytest.mark.timeout(120)


def _fact(session: str, i: int, expires_at: float | None) -> Fact:
    return Fact(session=session, predicate="seat", args=[f"R{i}", f"v{i}"], fact=f"seat('R{i}',v{i})",
                provenance="observed", expires_at=expires_at)


async def _counts(store: FactStore) -> tuple[int, int]:
    (facts,) = await store.db.query("SELECT COUNT(*) FROM facts")
    (values,) = await store.db.query("SELECT COUNT(*) FROM fact_values")
    return facts[0], values[0]


@pytest.mark.parametrize("batch", [1, 7, 2_000])
async def test_exactly_the_expired_facts_and_their_values_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(fact_store, "PURGE_BATCH", batch)
    now = time.time()
    async with FactStore(tmp_path / "facts.db") as store:
        # expired, at the very instant, live, for the whole session; in two sessions, interleaved
        await store.add([_fact(f"s{i % 2}", i, now - 100 + i) for i in range(60)])  # 0..40 expired at now-60
        await store.add([_fact("s2", i, None) for i in range(5)])
        await store.add([_fact("s3", i, now + 30) for i in range(5)])
        refreshed = _fact("s0", 0, now + 300)  # learned again before the purge: it lives on
        await store.add([refreshed])
        assert await _counts(store) == (70, 140)
        deleted = await store.purge_expired(now - 60)
        assert deleted == 40  # R1..R40 (R40 at the very instant); s0's R0 was refreshed
        assert await _counts(store) == (30, 60)
        left = {f.fact for s in ("s0", "s1", "s2", "s3") for f in await store.valid(s, now - 60)}
        assert left == {"seat('R0',v0)", *(f"seat('R{i}',v{i})" for i in range(41, 60)),
                        *(f"seat('R{i}',v{i})" for i in range(5))}
        assert await store.known_values("s0", ["R0", "v0", "R2"], now - 60) == {"R0", "v0"}
        assert await store.purge_expired(now - 60) == 0
        assert await store.purge_expired(now + 1_000) == 25  # all but the five held for the session
        assert await _counts(store) == (5, 10)


async def test_a_write_during_a_long_purge_waits_for_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fact_store, "PURGE_BATCH", 50)
    now = time.time()
    async with FactStore(tmp_path / "facts.db") as store:
        await store.add([_fact(f"old-{i % 100}", i, now - 10) for i in range(5_000)])  # 100 batches
        purge = asyncio.ensure_future(store.purge_expired(now))
        await asyncio.sleep(0)  # the first batch is queued
        await store.learn([_fact("late", 1, now + 60)])
        await store.count("late")  # waits until the learned fact is committed
        assert not purge.done(), "the learned write waited for the whole purge"
        assert await purge == 5_000
        assert await store.count() == 1


async def test_one_purge_is_bounded_and_the_next_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fact_store, "PURGE_BATCH", 10)
    monkeypatch.setattr(fact_store, "MAX_PURGE_BATCHES", 3)
    now = time.time()
    async with FactStore(tmp_path / "facts.db") as store:
        await store.add([_fact("s", i, now - 10) for i in range(45)])
        assert await store.purge_expired(now) == 30
        assert await store.purge_expired(now) == 15
        assert await store.count() == 0
