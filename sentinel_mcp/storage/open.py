"""Open databases by location; stores that live in the same file share one ``Database`` (one writer)."""

from __future__ import annotations

import threading
from pathlib import Path

from sentinel_mcp.storage.sqlite import EXCLUSIVE, SQLiteDatabase, SQLiteOptions

_open: dict[str, tuple[SQLiteDatabase, int]] = {}
_lock = threading.Lock()


def open_database(location: str | Path, name: str, options: SQLiteOptions = EXCLUSIVE) -> SQLiteDatabase:
    """The database at ``location`` (a SQLite path; a ``postgresql://`` URL once that backend exists),
    started on first use and shared after that. Pair every call with ``release``."""
    key = str(Path(location).resolve())
    with _lock:
        held = _open.get(key)
        if held is not None:
            _open[key] = (held[0], held[1] + 1)
            return held[0]
        db = SQLiteDatabase(Path(location), name, options).start()
        _open[key] = (db, 1)
        return db


def open_databases() -> list[SQLiteDatabase]:
    with _lock:
        return [db for db, _ in _open.values()]


def find_open(location: str | Path) -> SQLiteDatabase | None:
    """The database at ``location`` if this process has it open (then read through it, not around it)."""
    with _lock:
        held = _open.get(str(Path(location).resolve()))
    return held[0] if held else None


async def release(db: SQLiteDatabase) -> None:
    key = str(db.path.resolve())
    with _lock:
        held = _open.get(key)
        if held is None or held[0] is not db:
            last = True
        elif held[1] > 1:
            _open[key] = (db, held[1] - 1)
            last = False
        else:
            del _open[key]
            last = True
    if last:
        await db.close()


def release_blocking(db: SQLiteDatabase) -> None:
    key = str(db.path.resolve())
    with _lock:
        held = _open.get(key)
        last = held is None or held[0] is not db or held[1] <= 1
        if held is not None and held[0] is db:
            if held[1] > 1:
                _open[key] = (db, held[1] - 1)
            else:
                del _open[key]
    if last:
        db.close_blocking()


async def close_all() -> None:
    with _lock:
        dbs = [db for db, _ in _open.values()]
        _open.clear()
    for db in dbs:
        await db.close()


def storage_status() -> dict[str, dict[str, object]]:
    """Each open database's health (for ``/healthz``)."""
    return {db.name: db.health.as_dict() for db in open_databases()}
