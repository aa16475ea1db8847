"""A commit the server does not confirm is refused within a bound (real PostgreSQL). With
``synchronous_commit=on`` and a synchronous standby (docs/cluster.md, "Production"), a commit waits for the
standby's word; a standby that is gone makes it wait for ever, and PostgreSQL's ``statement_timeout`` does not
cover that wait (it is turned off before the commit). Before, the replica's one writer thread waited there:
every call behind it waited with it (no answer, no refusal) and ``/healthz`` said "ok", so a balancer kept
sending calls to it. Now the wait is bounded: the commit is cancelled, its jobs fail closed (the rows are
committed on the primary, not confirmed replicated: a crash's outcome) and the store shows degraded.

The standby is a name in ``synchronous_standby_names`` that no server answers to, on a server of this test's
own (the setting is the whole server's)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import psycopg
import pytest

from sentinel_mcp.storage import Statement, StorageError, open_database, postgres
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from sentinel_mcp.storage.open import release

HANG = 60  # a bound on the test (the store's own bound is about a second here), not a measurement
pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def server() -> Iterator[LocalServer]:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-sync-"))
    srv = LocalServer(root / "pg", free_port())
    try:
        srv.init().start()
        yield srv
    finally:
        srv.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


def standby_gone(srv: LocalServer, gone: bool) -> None:
    with psycopg.connect(srv.url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET synchronous_standby_names = %s" % ("'ghost'" if gone else "''"))
        conn.execute("SELECT pg_reload_conf()")


def count(srv: LocalServer) -> int:
    with psycopg.connect(srv.url) as conn:
        return int(conn.execute("SELECT count(*) FROM t").fetchone()[0])  # type: ignore[index]


async def test_a_commit_the_standby_never_confirms_is_refused_within_a_bound(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postgres, "STATEMENT_TIMEOUT", 1.0)
    db = open_database(server.url, "syncwait")
    try:
        await db.write("CREATE TABLE t (n INTEGER)")
        await db.write("INSERT INTO t (n) VALUES (?)", (0,))
        assert db.health.ok
        standby_gone(server, True)
        # one statement alone (autocommit), a group of several, a job of two statements. pg_reload_conf only
        # signals: the store's backend may commit one more before it reads the new setting (seen under load),
        # so writes go on until one is held, a bounded count of them
        for _ in range(100):
            try:
                await asyncio.wait_for(db.write("INSERT INTO t (n) VALUES (?)", (1,)), HANG)
            except StorageError as e:
                assert "not confirm" in str(e), e
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("no commit waited for the standby: the setting never reached the store's backend")
        assert not db.health.ok and "not confirm" in (db.health.cause or "")
        writes = [db.write("INSERT INTO t (n) VALUES (?)", (i,)) for i in range(2, 6)]
        outcomes = await asyncio.wait_for(asyncio.gather(*writes, return_exceptions=True), HANG)
        assert all(isinstance(o, StorageError) for o in outcomes), outcomes
        with pytest.raises(StorageError):
            await asyncio.wait_for(db.run([Statement("INSERT INTO t (n) VALUES (6)"),
                                           Statement("INSERT INTO t (n) VALUES (7)")]), HANG)
        # the server back to answering commits: the store serves again by itself
        standby_gone(server, False)
        await asyncio.wait_for(db.write("INSERT INTO t (n) VALUES (?)", (8,)), HANG)
        assert db.health.ok
        assert (await db.query("SELECT count(*) FROM t WHERE n = 8"))[0][0] == 1
    finally:
        standby_gone(server, False)
        await release(db)
