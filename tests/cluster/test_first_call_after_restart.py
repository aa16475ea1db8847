"""Once PostgreSQL is back after a crash, the very first read and the very first write succeed: connections
opened before the restart (the read pool's idle ones, the writer's own) are dead, and a statement that
fails on such a connection before anything was committed is run again once on a fresh connection. A commit
whose answer was lost is never run again (it may have committed)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import AsyncIterator

import pytest

from sentinel_mcp.storage import Statement, StorageError
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from sentinel_mcp.storage.postgres import READERS, PostgresDatabase
from sentinel_mcp.storage.location import server_location

ROUNDS = 2  # crash and restart, bounded by count


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-restart-"))
    srv = LocalServer(root / "pg", free_port())
    try:
        await asyncio.to_thread(lambda: srv.init().start())
        yield srv
    finally:
        await asyncio.to_thread(srv.stop, "immediate")
        shutil.rmtree(root, ignore_errors=True)


async def test_first_reads_and_write_after_a_restart_succeed(server: LocalServer) -> None:
    db = PostgresDatabase(server_location(server.url), "restart").start()
    try:
        await db.write("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        for n in range(ROUNDS):
            # every reader thread holds a pooled connection, and the writer its own
            await asyncio.gather(*(db.query("SELECT pg_sleep(0.05), count(*) FROM t")
                                   for _ in range(READERS * 2)))
            await db.write("INSERT INTO t (n) VALUES (?)", (n * 10,))
            await asyncio.to_thread(server.stop, "immediate")
            with pytest.raises(StorageError):
                await db.query("SELECT count(*) FROM t")
            await asyncio.to_thread(server.start)
            # the first reads (as many as the pool held) and the first write: all served
            counts = await asyncio.gather(*(db.query("SELECT count(*) FROM t") for _ in range(READERS * 2)))
            assert all(c == [(n + 1,)] for c in counts), counts
            await db.write("INSERT INTO t (n) VALUES (?)", (n * 10 + 1,))
            assert await db.query("SELECT count(*) FROM t") == [(n + 2,)]
            await db.write("DELETE FROM t WHERE n = ?", (n * 10 + 1,))
            assert db.health.ok
    finally:
        await db.close()


async def test_a_lone_write_that_fails_rolls_back_alone(server: LocalServer) -> None:
    """A write alone in its transaction (no savepoints then): its own error undoes only it, the store stays
    healthy, and the next write commits."""
    db = PostgresDatabase(server_location(server.url), "alone").start()
    try:
        await db.write("CREATE TABLE u (n INTEGER PRIMARY KEY)")
        await db.write("INSERT INTO u (n) VALUES (?)", (1,))
        for _ in range(3):  # bounded: the failed job leaves no aborted transaction behind
            with pytest.raises(Exception) as failed:
                await db.run([Statement("INSERT INTO u (n) VALUES (?)", (2,)),
                              Statement("INSERT INTO u (n) VALUES (?)", (1,))])  # the second one collides
            assert "duplicate key" in str(failed.value)
            assert db.health.ok
        await db.write("INSERT INTO u (n) VALUES (?)", (3,))
        assert await db.query("SELECT n FROM u ORDER BY n") == [(1,), (3,)]  # 2 was undone with its job
    finally:
        await db.close()
