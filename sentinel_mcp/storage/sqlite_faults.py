"""Which SQLite errors are the storage's fault (the file, the disk, a lock), not the statement's: the store
then fails closed and degrades; and which of those mean the file may not grow (a full disk, a size limit)."""

from __future__ import annotations

import sqlite3

# error names that mean the storage itself is at fault (not the statement): fail closed and degrade
_FAULTS = ("SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_CORRUPT",
           "SQLITE_NOTADB", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_PERM", "SQLITE_NOLFS", "SQLITE_PROTOCOL")


def is_fault(e: BaseException) -> bool:
    name = getattr(e, "sqlite_errorname", "") or ""
    if name.startswith(_FAULTS):
        return True
    text = str(e).lower()
    return isinstance(e, sqlite3.OperationalError) and any(
        w in text for w in ("disk i/o", "readonly", "read-only", "disk is full", "unable to open", "locked"))


_CANNOT_GROW = ("SQLITE_FULL", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_TRUNCATE")


def cannot_grow(e: sqlite3.Error) -> bool:
    """SQLite's words for a write the file system refused (ENOSPC, EFBIG: full disk, ulimit -f)."""
    name = getattr(e, "sqlite_errorname", "") or ""
    return name.startswith(_CANNOT_GROW)
