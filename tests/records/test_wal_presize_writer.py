"""A fresh store's write-ahead log is grown to its working size (``wal_presize``) by the store's writer
thread, as its first job, not by the thread that opens it: at ``serve``'s start that thread is the event
loop's, and writing the ~4 MB there held the start back (issue 21: a fresh audit store each start, 7-22 ms
on this machine under load, more when the disk is busy). The log is still grown before any other job runs."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.storage import Schema, open_database
from sentinel_mcp.storage import sqlite as sqlite_module
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.sqlite import EXCLUSIVE


async def test_the_log_is_grown_on_the_writer_before_its_other_jobs(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    grown_on: list[str] = []
    original = sqlite_module.presize_wal

    def noted(conn: Any, path: Path) -> None:
        grown_on.append(threading.current_thread().name)
        original(conn, path)

    monkeypatch.setattr(sqlite_module, "presize_wal", noted)
    store = tmp_path / "s.db"
    db = open_database(store, "s", EXCLUSIVE)
    try:
        await db.migrate(Schema("s", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)"]}))
        assert grown_on == ["storage:s"], grown_on  # once, on the writer's thread
        page = (await db.query("PRAGMA page_size"))[0][0]
        pages = (await db.query("PRAGMA wal_autocheckpoint"))[0][0]
        assert os.path.getsize(f"{store}-wal") >= pages * page  # grown before the migration's job ran
        await db.write("INSERT INTO t (x) VALUES ('kept')")
        assert await db.query("SELECT x FROM t") == [("kept",)]
    finally:
        await release(db)
