"""Conversations that hold nothing but their seeds leave the store at the purge, on each backend: a
conversation a call (2026-era clients carrying no session back) left one row per seed for good. A
conversation holding any other fact (learned, expiring later, an answer) or a bound context keeps its seeds,
and the kept facts' scope is never touched."""

from __future__ import annotations

import time

from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE
from sentinel_mcp.policy.seed_only_sessions import forget_seed_only


def _seed(session: str) -> Fact:
    return Fact(session=session, predicate="current_user", args=["u_1"], fact="current_user(u_1)",
                provenance="seed")


def _fact(session: str, provenance: str = "observed", ttl: float | None = 60.0) -> Fact:
    return Fact(session=session, predicate="owns", args=["u_1", "R1"], fact="owns(u_1,'R1')",
                provenance=provenance, expires_at=None if ttl is None else time.time() + ttl)  # type: ignore


async def _sessions_with_seeds(store: FactStore) -> set[str]:
    rows = await store.db.query("SELECT DISTINCT session FROM facts WHERE provenance = 'seed'")
    return {r[0] for r in rows}


async def test_conversations_of_seeds_alone_are_forgotten(store_location: str) -> None:
    store = await FactStore(store_location).open()
    try:
        for i in range(25):  # a conversation a call: seeded, its read's facts expired
            await store.add([_seed(f"gone{i}"), _fact(f"gone{i}", ttl=-1)])
        await store.add([_seed("live"), _fact("live")])
        await store.add([_seed("answered"), _fact("answered", provenance="agent", ttl=None)])
        await store.add([_seed("focused")])
        await store.bind_context("focused", "res", "R-3")
        await store.add([_seed(KEPT_SCOPE)])
        await store.purge_expired()
        assert await forget_seed_only(store) == 25
        assert await _sessions_with_seeds(store) == {"live", "answered", "focused", KEPT_SCOPE}
        assert await store.count() == 6  # live, answered: 2 each; focused and the kept scope: 1 each
        assert not await store.db.query("SELECT 1 FROM fact_values WHERE session LIKE 'gone%'")
        assert await forget_seed_only(store) == 0  # nothing left to forget
        # a conversation forgotten and seeded again holds its seed
        await store.add([_seed("gone3")])
        assert [f.fact for f in await store.valid("gone3")] == ["current_user(u_1)"]
    finally:
        await store.close()
