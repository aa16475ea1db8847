"""A swarm build's end is signed on a server store (``swarm/build_rows.end_mac``: id, state, finished_at) by
the replica that ended it, and what removes a build's files acts only on a signed end: the retention sweep of
FAILED builds past their days, the trim of a principal's kept builds. Before, anyone who could write the
database without the seal key could mark a running build FAILED (or move a failed one's end back in time) in
SQL, and the next sweep on its replica deleted its workspace. Real PostgreSQL, real directories."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm import build_lease
from sentinel_mcp.swarm.retention import DAY, sweep
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore

KEY = b"s" * 32
TID = "t20261205-061500-b0b0b0"


def sql(url: str, text: str, params: tuple = ()) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text, params)


async def build(url: str, root: Path, lease: float = 600.0) -> Path:
    ws = root / TID
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('bob')\n")
    async with SwarmStore(url, key=KEY) as store:
        assert await store.create_task(TID, {"app_name": "Bob's notes"}, ws, principal="bob", session="bob/s",
                                       lease=("replica-a", "replica-a/x", lease))
    return ws


async def swept(url: str, root: Path, *, days_later: float = 8.0) -> list[str]:
    """What this replica's sweep removes ``days_later`` days from now (nothing runs here)."""
    async with SwarmStore(url, key=KEY) as store:
        report = await sweep(root, store, SwarmSettings(), now=time.time() + days_later * DAY)
    return report.workspaces + report.trimmed


ATTACKS = {
    # a running build marked FAILED long ago
    "marked failed": "UPDATE tasks SET state = 'FAILED', finished_at = 1000, updated_at = 1000",
    "marked failed, lease dropped": "UPDATE tasks SET state = 'FAILED', finished_at = 1000, "
                                    "lease_until = NULL, lease_holder = ''",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
async def test_a_build_ended_in_sql_keeps_its_files(pg_url: str, tmp_path: Path, attack: str) -> None:
    ws = await build(pg_url, tmp_path)
    sql(pg_url, ATTACKS[attack])
    assert await swept(pg_url, tmp_path) == [] and (ws / "src" / "app.py").exists()
    async with SwarmStore(pg_url, key=KEY) as store:
        assert await store.ended("bob") == []  # not counted among bob's kept builds either


async def test_a_signed_end_moved_back_in_time_or_to_another_state_is_not_acted_on(pg_url: str,
                                                                                 tmp_path: Path) -> None:
    ws = await build(pg_url, tmp_path)
    async with SwarmStore(pg_url, key=KEY) as store:
        await store.set_state(TID, "FAILED", error="the model gave up")
    assert await swept(pg_url, tmp_path, days_later=1) == []  # its days not up yet
    sql(pg_url, "UPDATE tasks SET finished_at = finished_at - 30 * 86400")  # its end moved back
    assert await swept(pg_url, tmp_path, days_later=1) == [] and ws.is_dir()
    sql(pg_url, "UPDATE tasks SET finished_at = finished_at + 30 * 86400, state = 'COMPLETED'")
    async with SwarmStore(pg_url, key=KEY) as store:
        assert await store.ended("bob") == []
    sql(pg_url, "UPDATE tasks SET state = 'FAILED'")  # as its replica ended it: acted on again
    assert await swept(pg_url, tmp_path) == [TID] and not ws.exists()


async def test_ends_a_replica_signs_are_acted_on(pg_url: str, tmp_path: Path) -> None:
    """The runner's end (``set_state``) and a sweeper's (a lapsed lease) are signed: swept past their days."""
    ws = await build(pg_url, tmp_path)
    async with SwarmStore(pg_url, key=KEY) as store:
        await store.set_state(TID, "COMPLETED")
        assert [t for t, *_ in await store.ended("bob")] == [TID]
    sql(pg_url, "DELETE FROM tasks")
    (tmp_path / TID).rename(tmp_path / "old")
    ws = await build(pg_url, tmp_path, lease=0.0)  # its lease lapses at once
    async with SwarmStore(pg_url, key=KEY) as store:
        assert [t for t, _ in await build_lease.end_lapsed(store.db, key=store.key)] == [TID]
    assert await swept(pg_url, tmp_path) == [TID] and not ws.exists()
    # without a key a sweeper still ends it, unsigned: its files are kept
    sql(pg_url, "DELETE FROM tasks")
    ws = await build(pg_url, tmp_path, lease=0.0)
    async with SwarmStore(pg_url, key=KEY) as store:
        assert [t for t, _ in await build_lease.end_lapsed(store.db)] == [TID]
    assert await swept(pg_url, tmp_path) == [] and ws.is_dir()
