"""How a SQLite store's file is opened: its journal, its sync, whether one process owns it (``sqlite.py``
explains each choice)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SQLiteOptions:
    journal: str = "WAL"  # WAL, or TRUNCATE for files several processes write
    synchronous: str = "FULL"
    exclusive: bool = True  # WAL's index in heap memory (no -shm mmap); one process owns the file
    busy_timeout_ms: int = 5000
    # each connection's page cache, set once as it opens (SQLite's default: 2,000 KiB, which the audit's
    # connection filled a page at a time over ~20k calls and kept). The audit grows at its end (time-ordered
    # keys): a commit touches the rightmost pages of the table and its indexes, ~16 pages (issue 21)
    cache_kib: int = 512


EXCLUSIVE = SQLiteOptions()
PROCESS = SQLiteOptions(synchronous="NORMAL")  # ``sentinel.audit.sync = "process"`` (survives kill -9 only)
SHARED = SQLiteOptions(journal="TRUNCATE", exclusive=False)
