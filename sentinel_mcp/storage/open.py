"""Open databases by location; stores that live in the same file (or server database) share one ``Database``
(one writer, one group commit)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from sentinel_mcp.storage.location import is_server_url, server_location
from sentinel_mcp.storage.sqlite import EXCLUSIVE, SQLiteDatabase, SQLiteOptions

_open: dict[str, tuple[Any, int]] = {}
_lock = threading.Lock()


def _key(location: str | Path) -> str:
    if is_server_url(location):
        return "server:" + server_location(str(location)).dsn  # in memory only; never shown
    return str(Path(location).resolve())


def _key_of(db: Any) -> str:
    loc = getattr(db, "location", None)
    return "server:" + loc.dsn if loc is not None else str(db.path.resolve())


def open_database(location: str | Path, name: str, options: SQLiteOptions = EXCLUSIVE) -> Any:
    """The database at ``location``: a SQLite path (``options`` apply), or a ``postgresql://`` URL (``${VAR}``
    expanded) that several replicas share. Started on first use and shared after that; pair every call with
    ``release``. Both kinds implement ``storage.Database``."""
    key = _key(location)
    with _lock:
        held = _open.get(key)
        if held is not None:
            _open[key] = (held[0], held[1] + 1)
            return held[0]
        if is_server_url(location):
            from sentinel_mcp.storage.postgres import (
                PostgresDatabase,
            )  # the driver only when a server is named

            from sentinel_mcp.storage.server_transport import check

            where = server_location(str(location))
            check(where)  # across the network: a verified TLS connection or none (InsecureTransport)
            db: Any = PostgresDatabase(where, name).start()
        else:
            db = SQLiteDatabase(Path(location), name, options).start()
        _open[key] = (db, 1)
        return db


def open_databases() -> list[Any]:
    with _lock:
        return [db for db, _ in _open.values()]


def find_open(location: str | Path) -> Any:
    """The database at ``location`` if this process has it open (then read through it, not around it)."""
    with _lock:
        held = _open.get(_key(location))
    return held[0] if held else None


async def release(db: Any) -> None:
    key = _key_of(db)
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


def release_blocking(db: Any) -> None:
    key = _key_of(db)
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
