"""A replica of an older Sentinel on a database a newer one has migrated: every store access refused.

The newer replica migrates a store's schema (here: a column added that every row must carry from now on).
The older replica's connections were open before; they went on reading and writing the migrated tables as
if nothing had changed (only the audit path noticed, through its trigger). Now every write of the older
replica is refused by the server itself (nothing written: the table's rows are counted through a connection
of the test's own), its reads are refused too, and a replica of the current version goes on working. Two
store objects stand for two replicas (each its own connections, as two processes have)."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from sentinel_mcp.storage import Statement, StorageError
from sentinel_mcp.storage.location import server_location
from sentinel_mcp.storage.postgres import READERS, PostgresDatabase
from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.search_path import pin
from sentinel_mcp.storage.server_schema import STALE, declare

ROUNDS = 3  # refused writes and reads per path, bounded by count

V1 = ["CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"]
# version 2: every row carries its writer's mark (an older replica does not know to write it)
V2 = V1 + ["ALTER TABLE notes ADD COLUMN mark TEXT"]
OLD = Schema("notes", {"postgres": V1, "sqlite": V1})
NEW = Schema("notes", {"postgres": V2, "sqlite": V2})
OTHER = Schema("other", {"postgres": ["CREATE TABLE other_rows (n INTEGER)"], "sqlite": []})


def rows(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute("SELECT id, body, mark FROM notes ORDER BY id").fetchall()


def opened(url: str, name: str) -> PostgresDatabase:
    return PostgresDatabase(server_location(url), name).start()


async def test_an_older_replica_is_refused_once_the_schema_moved_past_it(pg_url: str) -> None:
    old = opened(pg_url, "old")
    new: PostgresDatabase | None = None
    try:
        await old.migrate(OLD)
        await old.write("INSERT INTO notes (id, body) VALUES (?, ?)", (1, "before"))
        # every reader of the old replica holds an open connection, as in a replica that has been serving
        await asyncio.gather(*(old.query("SELECT pg_sleep(0.02), count(*) FROM notes")
                               for _ in range(READERS * 2)))

        new = opened(pg_url, "new")
        await new.migrate(NEW)
        await new.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (2, "new", "m"))

        before = rows(pg_url)
        for n in range(ROUNDS):
            with pytest.raises(StorageError):  # a statement alone (its own transaction)
                await old.write("INSERT INTO notes (id, body) VALUES (?, ?)", (10 + n, "old alone"))
            with pytest.raises(StorageError):  # a job of several statements (one transaction)
                await old.run([Statement("INSERT INTO notes (id, body) VALUES (?, ?)", (20 + n, "old a")),
                               Statement("UPDATE notes SET body = ? WHERE id = 1", ("old b",))])
            # several jobs committed together (each in its savepoint): every one refused
            group = await asyncio.gather(*(old.write("INSERT INTO notes (id, body) VALUES (?, ?)",
                                                     (100 + 10 * n + k, "old group")) for k in range(4)),
                                         return_exceptions=True)
            assert all(isinstance(r, StorageError) for r in group), group
            with pytest.raises(StorageError):  # a consume (the row taken by one transaction only)
                await old.consume("DELETE FROM notes WHERE id = 1 RETURNING id")
            with pytest.raises(StorageError):
                await old.query("SELECT id, body FROM notes")
            with pytest.raises(StorageError):
                await asyncio.to_thread(old.query_blocking, "SELECT id FROM notes")
        assert rows(pg_url) == before  # nothing of the older replica's was written
        assert not old.health.ok and "newer than this Sentinel knows" in str(old.health.cause)

        # the replica of the current version is not held up by the older one's refusals
        await new.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (3, "new again", "m"))
        assert [r[0] for r in await new.query("SELECT id FROM notes ORDER BY id")] == [1, 2, 3]
        assert new.health.ok
    finally:
        await old.close()
        if new is not None:
            await new.close()


async def test_a_store_created_by_another_replica_does_not_refuse_this_ones(pg_url: str) -> None:
    """A replica of the same version opening a store this one has not (a new table, no table of ours moved):
    this replica's writes and reads go on, none refused."""
    one = opened(pg_url, "one")
    two: PostgresDatabase | None = None
    try:
        await one.migrate(NEW)
        await one.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (1, "a", "m"))
        await one.query("SELECT count(*) FROM notes")
        two = opened(pg_url, "two")
        await two.migrate(NEW)
        await two.migrate(OTHER)
        for n in range(ROUNDS):
            await one.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (10 + n, "a", "m"))
            await one.run([Statement("INSERT INTO notes (id, body, mark) VALUES (?, ?, 'm')", (20 + n, "b")),
                           Statement("UPDATE notes SET body = 'c' WHERE id = 1")])
            assert (await one.query("SELECT count(*) FROM notes"))[0][0] == 1 + 2 * (n + 1)
        assert one.health.ok
    finally:
        await one.close()
        if two is not None:
            await two.close()


async def test_the_servers_guard_refuses_a_session_that_declared_an_older_schema(pg_url: str) -> None:
    """The server's own check, with no notice heard (a session that does not listen, a notice still on its
    way): a session that declared the schema before the migration has every kind of write refused, inside
    the statement, before any row is touched; one that declared after it writes."""
    first = opened(pg_url, "first")
    await first.migrate(OLD)
    await first.write("INSERT INTO notes (id, body) VALUES (1, 'kept')")
    with psycopg.connect(pg_url, autocommit=True) as stale:
        pin(stale, pg_url)
        declare(stale, [OLD])
        stale.execute("INSERT INTO notes (id, body) VALUES (2, 'before the move')")  # not moved yet: written
        new = opened(pg_url, "new")
        try:
            await new.migrate(NEW)
        finally:
            await new.close()
        before = rows(pg_url)
        for sql in ("INSERT INTO notes (id, body) VALUES (3, 'old')", "UPDATE notes SET body = 'old'",
                    "DELETE FROM notes", "TRUNCATE notes",
                    "INSERT INTO notes (id, body) SELECT 100 + g, 'old' FROM generate_series(1, 3) g"):
            with pytest.raises(psycopg.Error) as refused:
                stale.execute(sql)
            assert refused.value.sqlstate == STALE, sql
        with pytest.raises(psycopg.Error):  # inside a transaction too: the transaction is refused whole
            with stale.transaction():
                stale.execute("SELECT 1")
                stale.execute("INSERT INTO notes (id, body) VALUES (4, 'old')")
        assert rows(pg_url) == before
        with pytest.raises(StorageError):  # declaring again: this Sentinel's schema is the older one
            declare(stale, [OLD])
    with psycopg.connect(pg_url, autocommit=True) as current:
        pin(current, pg_url)
        declare(current, [NEW])
        current.execute("INSERT INTO notes (id, body, mark) VALUES (5, 'current', 'm')")
    assert [r[0] for r in rows(pg_url)] == [1, 2, 5]
    await first.close()


async def test_notices_sent_by_anyone_cost_a_replica_no_reconnect(pg_url: str) -> None:
    """Any role that may connect can NOTIFY the migrations' channel: a flood of them must not make the
    replica drop and reopen its connections (each reopen re-applies every store's schema): the writer keeps
    its connection (its backend's pid) and writes; reads are served. Bounded by count."""
    db = opened(pg_url, "noticed")
    try:
        await db.migrate(NEW)
        await db.write("CREATE TABLE pids (pid INTEGER)")
        await db.query("SELECT 1")
        with psycopg.connect(pg_url, autocommit=True) as stranger:
            for n in range(ROUNDS * 3):
                for _ in range(50):
                    stranger.execute("NOTIFY sentinel_schema")
                await db.write("INSERT INTO pids (pid) SELECT pg_backend_pid()")
                await db.write("INSERT INTO notes (id, body, mark) VALUES (?, 'x', 'm')", (n,))
                assert (await db.query("SELECT count(*) FROM notes")) == [(n + 1,)]
        assert len(await db.query("SELECT DISTINCT pid FROM pids")) == 1
        assert db.health.ok
    finally:
        await db.close()
