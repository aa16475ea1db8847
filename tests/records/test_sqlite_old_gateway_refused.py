"""Gateways of two Sentinel versions sharing one SQLite store file (a data dir several gateways use): once
the newer one migrates a store's schema, the older one's writes there are refused by SQLite itself, inside
the statement (nothing written), and its health says why; a gateway of the current version goes on, also
when another gateway only added a store. As ``tests/cluster/test_old_replica_refused.py`` for PostgreSQL.
Two database objects stand for two gateways (each its own connection, as two processes have)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.storage import Statement, StorageError
from sentinel_mcp.storage.schema import Schema
from sentinel_mcp.storage.sqlite import SHARED, SQLiteDatabase

ROUNDS = 3  # refused writes per path, bounded by count

V1 = ["CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)"]
# version 2: every row carries its writer's mark (an older gateway does not know to write it)
V2 = V1 + ["ALTER TABLE notes ADD COLUMN mark TEXT"]
OLD = Schema("notes", {"postgres": V1, "sqlite": V1})
NEW = Schema("notes", {"postgres": V2, "sqlite": V2})
OTHER = Schema("other", {"postgres": [], "sqlite": ["CREATE TABLE other_rows (n INTEGER)"]})


def rows(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT * FROM notes ORDER BY id").fetchall()
    finally:
        conn.close()


def opened(path: Path, name: str) -> SQLiteDatabase:
    return SQLiteDatabase(path, name, SHARED).start()


async def test_an_older_gateway_is_refused_once_the_schema_moved_past_it(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    old = opened(path, "old")
    new: SQLiteDatabase | None = None
    try:
        await old.migrate(OLD)
        await old.write("INSERT INTO notes (id, body) VALUES (?, ?)", (1, "before"))
        new = opened(path, "new")
        await new.migrate(NEW)
        await new.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (2, "new", "m"))

        before = rows(path)
        for n in range(ROUNDS):
            with pytest.raises(StorageError):  # a statement alone
                await old.write("INSERT INTO notes (id, body) VALUES (?, ?)", (10 + n, "old alone"))
            with pytest.raises(StorageError):  # a job of several statements (one transaction)
                await old.run([Statement("INSERT INTO notes (id, body) VALUES (?, ?)", (20 + n, "old a")),
                               Statement("UPDATE notes SET body = ? WHERE id = 1", ("old b",))])
            group = await asyncio.gather(*(old.write("INSERT INTO notes (id, body) VALUES (?, ?)",
                                                     (100 + 10 * n + k, "old group")) for k in range(4)),
                                         return_exceptions=True)
            assert all(isinstance(r, StorageError) for r in group), group
            with pytest.raises(StorageError):
                await old.consume("DELETE FROM notes WHERE id = 1 RETURNING id")
        assert rows(path) == before  # nothing of the older gateway's was written
        assert not old.health.ok and "newer than this Sentinel knows" in str(old.health.cause)

        await new.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (3, "new again", "m"))
        assert [r[0] for r in await new.query("SELECT id FROM notes ORDER BY id")] == [1, 2, 3]
        assert new.health.ok
    finally:
        await old.close()
        if new is not None:
            await new.close()


async def test_a_store_added_by_another_gateway_does_not_refuse_this_ones(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    one = opened(path, "one")
    two: SQLiteDatabase | None = None
    try:
        await one.migrate(NEW)
        await one.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (1, "a", "m"))
        two = opened(path, "two")
        await two.migrate(NEW)
        await two.migrate(OTHER)
        for n in range(ROUNDS):
            await one.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (10 + n, "a", "m"))
            await one.run([Statement("INSERT INTO notes (id, body, mark) VALUES (?, ?, 'm')", (20 + n, "b")),
                           Statement("UPDATE notes SET body = 'c' WHERE id = 1")])
            await two.write("INSERT INTO notes (id, body, mark) VALUES (?, ?, ?)", (30 + n, "t", "m"))
            assert (await one.query("SELECT count(*) FROM notes"))[0][0] == 1 + 3 * (n + 1)
        assert one.health.ok and two.health.ok
        # a session that declares nothing (an operator's sqlite3 shell) is not checked, as on PostgreSQL
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO notes (id, body) VALUES (99, 'operator')")
        conn.commit()
        conn.close()
    finally:
        await one.close()
        if two is not None:
            await two.close()


async def test_two_gateways_migrating_one_new_file_at_once_both_open(tmp_path: Path) -> None:
    """Two gateways started together on one fresh store file both read version 0 and both migrate: each step
    is read again under the write lock, so the second does not run an ALTER the first already ran."""
    for n in range(ROUNDS * 4):
        path = tmp_path / f"race-{n}.db"
        a, b = opened(path, "a"), opened(path, "b")
        try:
            await asyncio.gather(a.migrate(NEW), b.migrate(NEW))
            await b.run([Statement("INSERT INTO notes (body, mark) VALUES (?, ?)", ("x", "b"))])
        finally:
            await a.close()
            await b.close()
        assert [r[1:] for r in rows(path)] == [("x", "b")]
