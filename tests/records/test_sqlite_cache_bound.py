"""SQLite's page cache, bounded per connection (issue 21's memory row): each connection of a store sets its
``cache_size`` once, as it opens (``SQLiteOptions.cache_kib``, 512 KiB), instead of SQLite's default of 2,000
KiB. The audit's rows and indexes grow at their end (time-ordered keys), so a call's commit touches the
rightmost pages of the table and of each index only (~16 pages); the default cache filled a page at a time
over the first ~20k calls, 2 MB a connection, and stayed. Counted with ``sqlite3_memory_used`` (the library
the ``sqlite3`` module uses) around 6 MB of rows written through a store."""

from __future__ import annotations

import ctypes
import secrets
from pathlib import Path

import _sqlite3

from sentinel_mcp.storage import Schema, Statement, open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.sqlite import SQLiteOptions

SCHEMA = Schema("audit_like", {"sqlite": [
    "CREATE TABLE a (id INTEGER PRIMARY KEY, ts TEXT NOT NULL, session TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE INDEX a_ts ON a(ts)", "CREATE INDEX a_session ON a(session)"]})
INSERT = "INSERT INTO a (ts, session, body) VALUES (?, ?, ?)"


def _sqlite_heap() -> int:
    used = ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used
    used.restype = ctypes.c_int64
    return int(used())


async def test_a_store_connection_caches_at_most_its_bound(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db", "a")
    try:
        await db.migrate(SCHEMA)
        assert db._conn.execute("PRAGMA cache_size").fetchone()[0] == -SQLiteOptions().cache_kib
        before = _sqlite_heap()
        for batch in range(6):  # ~6 MB of table and index pages, three times the default cache
            rows = [(f"{batch:04d}{n:08d}", f"owner/conv-{batch:04d}{n:08d}{secrets.token_hex(8)}", "y" * 700)
                    for n in range(1_000)]
            await db.run([Statement(INSERT, rows, many=True)])
        grown = _sqlite_heap() - before
        rows = await db.query("SELECT count(*) FROM a")
    finally:
        await release(db)
    assert rows == [(6_000,)]
    # the bound, and room for the statements and the WAL index the writes prepared and grew
    assert grown <= (SQLiteOptions().cache_kib + 256) * 1024, grown
