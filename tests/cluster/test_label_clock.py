"""Conversation labels on the database's clock (real PostgreSQL): a replica whose clock lags cannot keep
(revive) a conversation idle past its time to live everywhere else, and one whose clock runs ahead cannot
write a use in the future (which kept the conversation alive longer on every replica)."""

from __future__ import annotations

import time

import pytest

from sentinel_mcp.storage import open_database
from sentinel_mcp.storage.conversation_names import SharedLabels
from sentinel_mcp.storage.open import release

IDLE = 3600.0
NOW = "EXTRACT(EPOCH FROM clock_timestamp())"


@pytest.mark.parametrize("behind", [2 * IDLE, 30 * 24 * 3600.0])
async def test_a_replica_whose_clock_lags_cannot_revive_an_idle_conversation(
    pg_url: str, behind: float
) -> None:
    db = open_database(pg_url, "labels")
    try:
        await SharedLabels.open(db, IDLE)
        on_time = SharedLabels(db, IDLE, refresh=0)
        late = SharedLabels(db, IDLE, refresh=0, clock=lambda: time.time() - behind)
        first = await on_time.session("alice", "trip")
        await db.write(f"UPDATE conversation_labels SET used_at = {NOW} - ?", (IDLE + 60,))  # idle past it
        fresh = await late.session("alice", "trip")
        assert fresh != first and fresh.startswith("alice/label-trip-")
        assert await on_time.session("alice", "trip") == fresh
    finally:
        await release(db)


@pytest.mark.parametrize("ahead", [2 * IDLE, 30 * 24 * 3600.0])
async def test_a_replica_whose_clock_runs_ahead_cannot_stretch_a_conversation(
    pg_url: str, ahead: float
) -> None:
    db = open_database(pg_url, "labels")
    try:
        await SharedLabels.open(db, IDLE)
        early = SharedLabels(db, IDLE, refresh=0, clock=lambda: time.time() + ahead)
        on_time = SharedLabels(db, IDLE, refresh=0)
        first = await early.session("alice", "trip")
        late = (await db.query(f"SELECT used_at - {NOW} FROM conversation_labels"))[0][0]
        assert late <= 0  # used now, by the cluster's clock: not in the future
        await db.write("UPDATE conversation_labels SET used_at = used_at - ?", (IDLE + 60,))
        assert await on_time.session("alice", "trip") != first  # idle past its time to live everywhere
        # nor does an early replica's sweep end another's conversation in use
        kept = await on_time.session("alice", "kept")
        early._trips = -1  # noqa: SLF001 - its next round trip sweeps
        await early.session("bob", "other")
        assert await on_time.session("alice", "kept") == kept
    finally:
        await release(db)
