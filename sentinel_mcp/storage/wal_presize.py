"""The write-ahead log of a fresh store, grown ahead of time to its working size (issue 21), where there is
room."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

log = logging.getLogger("sentinel_mcp.storage.sqlite")
_PRESIZE_ROOM = 16  # pre-size only where the file system has this many times the log's size free


def presize_wal(conn: sqlite3.Connection, path: Path) -> None:
    """Grow a fresh write-ahead log to the size it reaches before its first checkpoint, once at start.

    Why: while the WAL grows, every commit's fsync also has to write the file's new size (a filesystem
    journal commit): measured here, 0.19-0.35 ms per commit for the first ~500 commits after a start against
    0.12 ms once the log is reused (a gateway's fdatasync p50 0.29-0.39 ms without, 0.25-0.29 ms with). One
    rolled-back transaction whose pages spill from a tiny cache writes the log to its full size in ~6 ms; its
    frames carry no commit mark, so recovery ignores them and the next commits overwrite them; the database
    file itself is not touched."""
    try:
        wal = os.path.getsize(f"{path}-wal")
    except OSError:
        wal = 0
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    if pages <= 0 or wal >= pages * page:
        return
    if _free_bytes(path) < _PRESIZE_ROOM * (pages + 64) * page:
        # a small file system: the ~4 MB ahead of time would take the room another store needs to start
        # (a 6 MB data dir refused to start); the log grows as it is used instead
        return
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    try:
        conn.execute("PRAGMA cache_size=16")
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("CREATE TABLE sentinel_wal_presize (b BLOB)")
            # a little over the checkpoint size: the pages the small cache keeps are never spilled
            conn.execute("INSERT INTO sentinel_wal_presize VALUES (zeroblob(?))", ((pages + 64) * page,))
        finally:
            if conn.in_transaction:  # a full disk ends it on its own
                conn.execute("ROLLBACK")
    except sqlite3.Error as e:  # only speed is at stake; a real fault shows on the first write
        log.debug("could not pre-size the write-ahead log of %s: %s", path, e)
    finally:
        conn.execute(f"PRAGMA cache_size={int(cache)}")


def _free_bytes(path: Path) -> int:
    try:
        fs = os.statvfs(path)  # (the store's file exists: its connection made it)
    except OSError:
        return 0
    return fs.f_bavail * fs.f_frsize
