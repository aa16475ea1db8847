"""Once PostgreSQL is back after a crash, a replica's reads do not wait on the read pool, and its health says
"ok" only once its rulebase follower has read the cluster's versions again (real PostgreSQL, stopped and
started by the test).

Seen in the full run (tests/cluster/test_outage_under_load.py): ``/healthz`` said "ok" (the writer's probe
had healed the store; the follower's last read, before the crash, was still within ``stale_after``), and the
very next call was refused as "behind the cluster's rulebase versions": the follower's first read after the
restart had waited the read pool's whole timeout, because the pool was backing off its reconnects (1 s, 2 s,
4 s... after the failures of the outage) while the server was already back."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import AsyncIterator

import psycopg_pool.base
import pytest

from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.postgres import READERS, PostgresDatabase
from tests.cluster.test_rulebase_behind_cluster import Allow, pay, replica

pytestmark = pytest.mark.timeout(120)

READS = 6  # after the restart, bounded by count


@pytest.fixture
async def server() -> AsyncIterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-follower-"))
    srv = LocalServer(root / "pg", free_port())
    try:
        await asyncio.to_thread(lambda: srv.init().start())
        yield srv
    finally:
        await asyncio.to_thread(srv.stop, "immediate")
        shutil.rmtree(root, ignore_errors=True)


async def test_reads_after_a_restart_do_not_wait_on_the_pools_backoff(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the interleaving, forced: the pool's next reconnect lands long after the server is back (in the full
    # run it was seconds away by the doubling of its backoff)
    monkeypatch.setattr(psycopg_pool.base.AttemptWithBackoff, "INITIAL_DELAY", 60.0)
    db = PostgresDatabase(server_location(server.url), "follower").start()
    try:
        await db.write("CREATE TABLE t (n INTEGER PRIMARY KEY)")
        # every reader thread holds a pooled connection
        await asyncio.gather(*(db.query("SELECT pg_sleep(0.05), count(*) FROM t")
                               for _ in range(READERS * 2)))
        await asyncio.to_thread(server.stop, "immediate")
        for _ in range(READERS + 1):  # each pooled connection met dead, dropped; its reconnect backs off
            with pytest.raises(StorageError):
                await db.query("SELECT count(*) FROM t")
        await asyncio.to_thread(server.start)
        await db.write("INSERT INTO t (n) VALUES (?)", (1,))  # the writer's probe: the store is healthy again
        assert db.health.ok
        waited = db._pool.get_stats().get("requests_errors", 0)
        for _ in range(READS):
            assert await db.query("SELECT count(*) FROM t") == [(1,)]
        # no read ran out the pool's timeout waiting for a connection its backoff had not made yet
        assert db._pool.get_stats().get("requests_errors", 0) == waited
        assert db.health.ok
    finally:
        await db.close()


async def test_health_is_not_ok_while_the_follower_cannot_read(server: LocalServer, tmp_path: Path) -> None:
    """The follower's reads fail (the store is down): calls are still decided until ``stale_after`` passes,
    but ``/healthz`` already says why (a balancer takes the replica out before it starts refusing), and
    says "ok" again only once a read succeeded (so "ok" means the follower has read since the outage)."""
    b = await replica(tmp_path, "replica-b", server.url)
    try:
        shared = b.shared_versions
        assert shared is not None
        await shared.close()  # the test polls, on its own clock
        now = [0.0]
        shared.clock = lambda: now[0]
        await shared.poll_once()
        assert b.cluster_problem is None
        await asyncio.to_thread(server.stop, "immediate")
        for _ in range(2):  # the first read meets a dead pooled connection, the next one a refused connect
            with pytest.raises(StorageError):
                await shared.poll_once()
            assert shared.refusal() is None  # within the bound: still decided
            assert b.cluster_problem is not None and "could not read" in b.cluster_problem, b.cluster_problem
        now[0] += shared.stale_after + 1
        assert shared.refusal() is not None  # past the bound: refused, as before
        await asyncio.to_thread(server.start)
        await shared.poll_once()
        assert b.cluster_problem is None
        assert isinstance(await b.decide(pay()), Allow)
    finally:
        await b.close()
