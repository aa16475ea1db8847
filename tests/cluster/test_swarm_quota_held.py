"""The hourly build quota on a server store holds when build rows are deleted or edited in SQL
(``swarm/build_quota.py``). Before, the quota counted the principal's rows started within the hour: a
database writer without the seal key deleted them (or moved ``created_at`` back) and the principal had more
builds that hour. Now a signed ledger per principal counts them, each build is numbered in it, and a ledger
that cannot be verified denies. Real PostgreSQL; the edits are plain SQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.swarm.state import SwarmStore
from sentinel_mcp.swarm.task_lock import BuildQuotaError

pytestmark = pytest.mark.timeout(120)
KEY = b"u" * 32
CAP = 3


def sql(url: str, text: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(text, params)
        return cur.fetchall() if cur.description else []


async def start(store: SwarmStore, n: int, tmp: Path, principal: str = "bob") -> bool:
    tid = f"t20261205-160000-{n:06x}"
    ok = await store.create_task(tid, {"app_name": "n"}, tmp / tid, principal=principal,
                                 lease=("replica-a", "replica-a/x", 600.0), per_hour=CAP)
    if ok:
        await store.set_state(tid, "COMPLETED")  # one unfinished build per caller: each ends at once
    return ok


async def filled(url: str, tmp: Path) -> SwarmStore:
    store = await SwarmStore(url, key=KEY).open()
    assert [await start(store, n, tmp) for n in range(CAP)] == [True] * CAP
    return store


async def test_the_cap_holds_and_is_per_principal(pg_url: str, tmp_path: Path) -> None:
    store = await filled(pg_url, tmp_path)
    try:
        assert not await start(store, 10, tmp_path)
        assert await start(store, 11, tmp_path, principal="alice")
        assert len(await store.started_since("bob", await store.now() - 3600)) == CAP
    finally:
        await store.close()


DELETIONS = {
    "every row deleted": "DELETE FROM tasks WHERE principal = 'bob'",
    "the oldest deleted": "DELETE FROM tasks WHERE task_id = (SELECT min(task_id) FROM tasks)",
    "started an hour back": "UPDATE tasks SET created_at = created_at - 7200",
    "moved to another principal": "UPDATE tasks SET principal = 'carol'",
}


@pytest.mark.parametrize("edit", sorted(DELETIONS))
async def test_rows_deleted_or_moved_back_in_sql_give_no_more_builds(
    pg_url: str, tmp_path: Path, edit: str
) -> None:
    store = await filled(pg_url, tmp_path)
    try:
        sql(pg_url, DELETIONS[edit])
        assert not await start(store, 10, tmp_path)
        # what the refusal counts (``BuildService._within_quota``): the signed ledger's count
        assert len(await store.started_since("bob", await store.now() - 3600)) == CAP
    finally:
        await store.close()


LEDGER_EDITS = {
    "starts emptied": "UPDATE swarm_quota SET starts = '[]'",
    "count lowered": "UPDATE swarm_quota SET seq = 0",
    "signature cleared": "UPDATE swarm_quota SET mac = ''",
    "ledger deleted, builds kept": "DELETE FROM swarm_quota",
    "alice's ledger given to bob": None,
}


@pytest.mark.parametrize("edit", sorted(LEDGER_EDITS))
async def test_a_ledger_edited_in_sql_denies(pg_url: str, tmp_path: Path, edit: str) -> None:
    store = await filled(pg_url, tmp_path)
    try:
        if LEDGER_EDITS[edit] is None:
            assert await start(store, 20, tmp_path, principal="alice")
            sql(pg_url, "DELETE FROM swarm_quota WHERE principal = 'bob'")
            sql(pg_url, "UPDATE swarm_quota SET principal = 'bob' WHERE principal = 'alice'")
        else:
            sql(pg_url, LEDGER_EDITS[edit])
        sql(pg_url, "DELETE FROM tasks WHERE principal = 'bob' AND task_id > "
                    "(SELECT min(task_id) FROM tasks)")
        with pytest.raises(BuildQuotaError, match="cannot be verified"):
            await start(store, 10, tmp_path)
        with pytest.raises(BuildQuotaError, match="cannot be verified"):
            await store.started_since("bob", 0.0)
        assert sql(pg_url, "SELECT count(*) FROM tasks WHERE task_id = 't20261205-160000-00000a'") == [(0,)]
    finally:
        await store.close()


async def test_an_older_ledger_put_back_denies(pg_url: str, tmp_path: Path) -> None:
    store = await SwarmStore(pg_url, key=KEY).open()
    try:
        assert await start(store, 0, tmp_path)
        old = sql(pg_url, "SELECT seq, starts, mac FROM swarm_quota WHERE principal = 'bob'")[0]
        assert await start(store, 1, tmp_path) and await start(store, 2, tmp_path)
        sql(pg_url, "UPDATE swarm_quota SET seq = %s, starts = %s, mac = %s", old)
        with pytest.raises(BuildQuotaError, match="cannot be verified"):
            await start(store, 3, tmp_path)
    finally:
        await store.close()


async def test_a_planted_build_number_vouches_for_nothing(pg_url: str, tmp_path: Path) -> None:
    """An unsigned row numbered past the ledger does not lock the principal out."""
    store = await SwarmStore(pg_url, key=KEY).open()
    try:
        assert await start(store, 0, tmp_path)
        sql(pg_url, "UPDATE tasks SET quota_seq = 99")
        sql(pg_url, "INSERT INTO tasks (task_id, state, spec_json, principal, workspace, created_at, "
                    "updated_at, quota_seq, quota_mac) VALUES ('t-planted', 'COMPLETED', '{}', 'bob', '/x', "
                    "0, 0, 500, 'ab')")
        assert await start(store, 1, tmp_path)  # its signed row stays numbered 1, the ledger at 2 now
    finally:
        await store.close()


async def test_submits_at_once_count_each_start_once(pg_url: str, tmp_path: Path) -> None:
    """Two stores (replicas) submitting for one principal at once: the ledger counts what started."""
    a, b = await SwarmStore(pg_url, key=KEY).open(), await SwarmStore(pg_url, key=KEY).open()
    try:
        for round_ in range(2 * CAP):
            await asyncio.gather(start(a, 2 * round_, tmp_path), start(b, 2 * round_ + 1, tmp_path),
                                 return_exceptions=True)
        started = sql(pg_url, "SELECT count(*) FROM tasks WHERE principal = 'bob'")[0][0]
        seq = sql(pg_url, "SELECT seq FROM swarm_quota WHERE principal = 'bob'")[0][0]
        assert started == seq == CAP
    finally:
        await a.close()
        await b.close()
