"""A hostile co-tenant (or an operator, or the server's own OOM killer) ends the replica's writer connection
while a write is half-way through its transaction: the write is refused or done whole, never half. Each job
here writes a row to ``t`` and then one to ``gate``, whose lock the test holds, so the job waits with its
first row sent; the test then terminates the waiting backend (``pg_terminate_backend``), as often as the
replica runs the job again (bounded by count). Afterwards every job's two rows are both there or both not,
and a job answered as written has both. The lone statement (its own transaction) and a group of jobs sharing
one transaction (each in its savepoint) are attacked the same way."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from sentinel_mcp.storage import Statement, StorageError
from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.postgres import PostgresDatabase

LOOKS = 400  # looks for a waiting backend to end, 0.02 s apart: a bound on the test, not a measurement
JOBS = 4  # jobs sent together (the writer commits those queued at once in one transaction)


def _kill_waiting(url: str, holder: int) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> %s AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'", (holder,)).fetchall()
    return len(rows)


async def _attacked(url: str, pending: list["asyncio.Future[Any]"], holder: int) -> int:
    killed = 0
    for _ in range(LOOKS):
        if all(f.done() for f in pending):
            break
        killed += await asyncio.to_thread(_kill_waiting, url, holder)
        await asyncio.sleep(0.02)
    return killed


@pytest.mark.parametrize("shape", ["two statements", "group", "statement alone"])
async def test_a_write_whose_connection_is_killed_mid_transaction_is_never_half_written(
    pg_url: str, shape: str
) -> None:
    db = PostgresDatabase(server_location(pg_url), "killed").start()
    try:
        await db.write("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        await db.write("CREATE TABLE gate (n INTEGER PRIMARY KEY)")
        with psycopg.connect(pg_url) as hold:
            holder = hold.info.backend_pid
            hold.execute("LOCK TABLE gate IN ACCESS EXCLUSIVE MODE")  # held until the rollback below
            if shape == "statement alone":  # one statement writing both (a CTE): atomic by itself
                jobs = [db.submit_write([Statement(
                    "WITH a AS (INSERT INTO t (n) VALUES (?) RETURNING n) "
                    "INSERT INTO gate (n) SELECT n FROM a", (n,))]) for n in range(1, 2)]
            else:
                count = JOBS if shape == "group" else 1
                jobs = [db.submit_write([Statement("INSERT INTO t (n) VALUES (?)", (n,)),
                                         Statement("INSERT INTO gate (n) VALUES (?)", (n,))])
                        for n in range(1, count + 1)]
            killed = await _attacked(pg_url, list(jobs), holder)
            hold.rollback()
        outcomes = await asyncio.gather(*jobs, return_exceptions=True)
        assert killed >= 1, "the attack never found the write waiting"
        assert all(o is None or isinstance(o, (list, StorageError)) for o in outcomes), outcomes
        with psycopg.connect(pg_url) as look:
            in_t = {r[0] for r in look.execute("SELECT n FROM t").fetchall()}
            in_gate = {r[0] for r in look.execute("SELECT n FROM gate").fetchall()}
        assert in_t == in_gate, (in_t, in_gate, outcomes)  # never one row of a job without the other
        for n, outcome in enumerate(outcomes, start=1):
            if not isinstance(outcome, BaseException):
                assert n in in_t, (n, outcomes)  # answered as written: it is there
        # the store is usable again once the server is (the next write reconnects)
        await db.write("INSERT INTO t (n) VALUES (?)", (100,))
        assert (await db.query("SELECT count(*) FROM t WHERE n = 100")) == [(1,)]
    finally:
        await db.close()
