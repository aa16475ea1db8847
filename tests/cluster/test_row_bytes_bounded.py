"""A stored row is read and written within a bound of bytes, on both backends: a row another writer planted
(a co-tenant of the database, an older gateway, a hostile local account with the file) over the bound is
refused when read or consumed, with words that say so, never loaded whole into this process; a write over
the bound is refused before it is committed, so Sentinel never writes a row it would refuse to read."""

from __future__ import annotations

import sqlite3

import pytest

from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.database import StatementError
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.row_bytes import MAX_ROW_BYTES
from sentinel_mcp.storage.sqlite import EXCLUSIVE, SHARED

BLOBS = Schema(
    "blobs",
    {
        "sqlite": ["CREATE TABLE blobs (k TEXT PRIMARY KEY, v TEXT NOT NULL, b BLOB)"],
        "postgres": ["CREATE TABLE blobs (k TEXT PRIMARY KEY, v TEXT NOT NULL, b BYTEA)"],
    },
)
OVER = MAX_ROW_BYTES + 1024


def plant(location: str, key: str, text: str, blob: bytes | None = None) -> None:
    """A row written past Sentinel's seam, as another writer of the same database would."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("INSERT INTO blobs (k, v, b) VALUES (%s, %s, %s)", (key, text, blob))
        return
    conn = sqlite3.connect(location)
    try:
        conn.execute("INSERT INTO blobs (k, v, b) VALUES (?, ?, ?)", (key, text, blob))
        conn.commit()
    finally:
        conn.close()


async def open_blobs(location: str, shared: bool = True):  # type: ignore[no-untyped-def]
    db = open_database(location, "blobs", SHARED if shared else EXCLUSIVE)
    await db.migrate(BLOBS)
    return db


def says_bound(e: BaseException) -> bool:
    return isinstance(e, StatementError) and "over" in str(e) and str(MAX_ROW_BYTES) in str(e)


async def test_a_planted_row_over_the_bound_is_refused_when_read(store_location: str) -> None:
    db = await open_blobs(store_location)
    try:
        await db.write("INSERT INTO blobs (k, v) VALUES (?, ?)", ("small", "fine"))
        plant(store_location, "big", "x" * OVER)
        for read in (db.query, db.query_dicts):
            with pytest.raises(StorageError) as told:
                await read("SELECT k, v FROM blobs ORDER BY k")
            assert says_bound(told.value), told.value
        with pytest.raises(StorageError) as told:
            await db.query("SELECT v FROM blobs WHERE k = ?", ("big",))
        assert says_bound(told.value), told.value
        # the store is not at fault: other rows read as before, the store stays healthy
        assert await db.query("SELECT k, v FROM blobs WHERE k = ?", ("small",)) == [("small", "fine")]
        assert db.health.ok
    finally:
        await release(db)


async def test_a_planted_blob_over_the_bound_is_refused_when_read(store_location: str) -> None:
    db = await open_blobs(store_location)
    try:
        plant(store_location, "big", "", b"\x00" * OVER)
        with pytest.raises(StorageError) as told:
            await db.query("SELECT b FROM blobs")
        assert says_bound(told.value), told.value
    finally:
        await release(db)


async def test_a_planted_row_over_the_bound_is_refused_when_consumed_and_stays(store_location: str) -> None:
    db = await open_blobs(store_location)
    try:
        plant(store_location, "big", "y" * OVER)
        with pytest.raises(StorageError) as told:
            await db.consume("DELETE FROM blobs WHERE k = ? RETURNING v", ("big",))
        assert says_bound(told.value), told.value
        # nothing was consumed without being answered: the row is still there
        assert await db.query("SELECT k FROM blobs") == [("big",)]
        assert db.health.ok
    finally:
        await release(db)


async def test_a_planted_row_over_the_bound_is_refused_when_a_with_statement_consumes_it(pg_url: str) -> None:
    """A ``WITH`` whose CTE deletes and whose last statement answers the rows (the facts' spent
    confirmations are taken so): refused as a plain ``DELETE ... RETURNING`` is, nothing taken."""
    db = await open_blobs(pg_url)
    try:
        plant(pg_url, "big", "y" * OVER)
        with pytest.raises(StorageError) as told:
            await db.consume("WITH gone AS (DELETE FROM blobs WHERE k = ? RETURNING k, v) "
                             "SELECT gone.* FROM gone ORDER BY k", ("big",))
        assert says_bound(told.value), told.value
        assert await db.query("SELECT k FROM blobs") == [("big",)]
        await db.write("INSERT INTO blobs (k, v) VALUES (?, ?)", ("small", "s"))
        assert await db.consume("WITH gone AS (DELETE FROM blobs WHERE k = ? RETURNING k, v) "
                                "SELECT gone.* FROM gone", ("small",)) == [("small", "s")]
    finally:
        await release(db)


@pytest.mark.parametrize("shared", [True, False])
async def test_a_write_over_the_bound_is_refused_and_nothing_is_written(
    store_location: str, shared: bool
) -> None:
    db = await open_blobs(store_location, shared)
    try:
        for params in (("t", "z" * OVER, None), ("b", "", b"\x01" * OVER),
                       ("two", "z" * (MAX_ROW_BYTES // 2 + 8), b"\x01" * (MAX_ROW_BYTES // 2 + 8)),
                       ("wide", "\u00e9" * (MAX_ROW_BYTES // 2 + 8), None)):
            with pytest.raises(StorageError) as told:
                await db.write("INSERT INTO blobs (k, v, b) VALUES (?, ?, ?)", params)
            assert says_bound(told.value), told.value
        with pytest.raises(StorageError) as told:
            rows = [("m1", "a"), ("m2", "z" * OVER)]
            await db.run([Statement("INSERT INTO blobs (k, v) VALUES (?, ?)", rows, many=True)])
        assert says_bound(told.value), told.value
        assert await db.query("SELECT count(*) FROM blobs") == [(0,)]
        # a row within the bound is written and read back whole
        near = "n" * (MAX_ROW_BYTES - 4096)
        await db.write("INSERT INTO blobs (k, v) VALUES (?, ?)", ("near", near))
        assert await db.query("SELECT v FROM blobs WHERE k = ?", ("near",)) == [(near,)]
        assert db.health.ok
    finally:
        await release(db)


# a read is bounded whatever leads it: blanks, comments (PostgreSQL nests /* */), another case, a parenthesis;
# only the server's own words (SHOW, EXPLAIN) are not wrapped
LEADS = ["-- the newest first\nSELECT k, v FROM blobs", "/* one */ /* two */ SELECT k, v FROM blobs",
         "\n\t select k, v from blobs",
         "/* a comment */ WITH x AS (SELECT k, v FROM blobs) SELECT * FROM x"]
# PostgreSQL's alone: nested comments, TABLE, a parenthesised query
SERVER_LEADS = ["/* two /* nested */ still */ SELECT k, v FROM blobs", "--\n--\nTABLE blobs",
                "(SELECT k, v FROM blobs)"]


@pytest.mark.parametrize("sql", LEADS)
async def test_a_read_led_by_a_comment_or_blank_is_bounded_too(store_location: str, sql: str) -> None:
    db = await open_blobs(store_location)
    try:
        plant(store_location, "big", "x" * OVER)
        with pytest.raises(StorageError) as told:
            await db.query(sql)
        assert says_bound(told.value), told.value
        assert db.health.ok
    finally:
        await release(db)


def test_only_the_servers_own_words_are_left_unwrapped() -> None:
    from sentinel_mcp.storage.row_bytes import bounded_sql

    for sql in LEADS + SERVER_LEADS:
        assert "sentinel_row" in bounded_sql(sql, False), sql
    for sql in ("SHOW server_version", "/* c */ explain SELECT 1", "-- x\nSHOW search_path"):
        assert bounded_sql(sql, False) == sql


@pytest.mark.parametrize("sql", SERVER_LEADS)
async def test_a_read_led_by_a_nested_comment_is_bounded_on_the_server(pg_url: str, sql: str) -> None:
    db = await open_blobs(pg_url)
    try:
        plant(pg_url, "big", "x" * OVER)
        with pytest.raises(StorageError) as told:
            await db.query(sql)
        assert says_bound(told.value), told.value
    finally:
        await release(db)
