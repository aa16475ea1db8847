"""A SQLite store file attacked as a hostile local account would: a folder above the store's that others
may write (they can move the store's folder away and put their own in its place), a page of the file
corrupted. Each is refused (calls fail closed) with words that name the file or folder and why."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.row_bytes import MAX_ROW_BYTES
from sentinel_mcp.storage.snapshot import read_connection
from sentinel_mcp.storage.sqlite import EXCLUSIVE, SHARED

SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)"]})
ROWS = 400  # enough rows for pages past the first few (a page of the table's, corrupted below)


@pytest.mark.parametrize("mode", [0o777, 0o757])
async def test_a_folder_above_the_stores_that_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    """``up/data/a.db``: ``data`` is the user's own, 0700, but ``up`` may be written by others (no sticky
    bit): whoever may write it can rename ``data`` and put a folder of theirs, or a link, in its place."""
    up = tmp_path / "up"
    up.mkdir(mode=0o700)
    data = up / "data"
    data.mkdir(mode=0o700)
    os.chmod(up, mode)
    db = open_database(data / "a.db", "t", SHARED)
    try:
        with pytest.raises(StorageError) as told:
            await db.migrate(SCHEMA)
        assert str(up) in str(told.value), told.value
        assert not db.health.ok
    finally:
        await release(db)
    assert not (data / "a.db").exists() or (data / "a.db").stat().st_size == 0


async def test_a_sticky_folder_above_the_stores_is_fine(tmp_path: Path) -> None:
    """As ``/tmp``: others may write it, but not rename what is the user's in it."""
    up = tmp_path / "up"
    up.mkdir(mode=0o700)
    data = up / "data"
    data.mkdir(mode=0o700)
    os.chmod(up, 0o1777)
    db = open_database(data / "a.db", "t", SHARED)
    try:
        await db.migrate(SCHEMA)
        await db.write("INSERT INTO t (x) VALUES (?)", ("a",))
        assert db.health.ok
    finally:
        await release(db)


def _corrupt_a_table_page(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    finally:
        conn.close()
    assert pages > 4
    with open(path, "r+b") as f:
        f.seek(page_size * (pages - 2))  # a leaf of the table: its header and cell pointers made noise
        f.write(b"\xff" * 64)


@pytest.mark.parametrize("options", [SHARED, EXCLUSIVE], ids=["shared", "exclusive"])
async def test_a_corrupted_page_is_refused_naming_the_file(tmp_path: Path, options: object) -> None:
    path = tmp_path / "a.db"
    db = open_database(path, "t", options)  # type: ignore[arg-type]
    try:
        await db.migrate(SCHEMA)
        rows = [(f"{i:0200d}",) for i in range(ROWS)]
        await db.run([Statement("INSERT INTO t (x) VALUES (?)", rows, many=True)])
    finally:
        await release(db)
    _corrupt_a_table_page(path)
    db = open_database(path, "t", options)  # type: ignore[arg-type]
    try:
        await db.migrate(SCHEMA)  # the schema's pages are whole: the store opens
        with pytest.raises(StorageError) as told:
            await db.query("SELECT count(*), max(length(x)) FROM t")
        assert str(path) in str(told.value) and "malformed" in str(told.value), told.value
        with pytest.raises(StorageError):
            await db.write("UPDATE t SET x = 'y'")
        assert not db.health.ok and str(path) in str(db.health.cause)
    finally:
        await release(db)


async def test_a_readers_copy_refuses_a_planted_row_over_the_bound(tmp_path: Path) -> None:
    """The CLI's readers (``audit``, ``audit verify``, the console's chain view) read a store through
    ``read_connection``, outside the seam: a row over the bound is refused there too, naming the file."""
    path = tmp_path / "a.db"
    db = open_database(path, "t", SHARED)
    try:
        await db.migrate(SCHEMA)
    finally:
        await release(db)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO t (x) VALUES (?)", ("x" * (MAX_ROW_BYTES + 1),))
    conn.commit()
    conn.close()
    with pytest.raises(StorageError) as told:
        with read_connection(path) as reader:
            reader.execute("SELECT x FROM t").fetchall()
    assert str(path) in str(told.value) and "too big" in str(told.value), told.value
