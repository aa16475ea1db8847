"""The sensors' store (consents, retained readings, audit), shared by the server and the CLI."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sentinel_mcp.storage import Schema, open_database
from sentinel_mcp.storage.open import release_blocking
from sentinel_mcp.storage.sqlite import SHARED

SCHEMA = """
CREATE TABLE IF NOT EXISTS consents (
    requester  TEXT NOT NULL,
    sensor     TEXT NOT NULL,
    scope      TEXT NOT NULL,
    granted_at REAL NOT NULL,
    expires_at REAL,            -- NULL: until revoked
    granted_by TEXT NOT NULL,   -- elicitation | cli | tool
    PRIMARY KEY (requester, sensor)
);
CREATE TABLE IF NOT EXISTS readings (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    requester  TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    sensor     TEXT NOT NULL,
    scope      TEXT NOT NULL,
    response   TEXT NOT NULL,   -- the SensorResponse JSON exactly as returned (already redacted)
    stored_at  REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS readings_expiry ON readings(expires_at);
CREATE TABLE IF NOT EXISTS audit (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    at         REAL NOT NULL,
    requester  TEXT NOT NULL,
    sensor     TEXT NOT NULL,
    scope      TEXT NOT NULL,
    policy_tag TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    decision   TEXT NOT NULL,   -- allowed | denied | throttled | failed | invalid
    reason     TEXT NOT NULL,
    redactions TEXT NOT NULL,   -- JSON list
    retention  INTEGER NOT NULL
)
"""
# 2: each audit row points to the gateway's decision (decision_id, "" standalone): one decision log
LINK_TO_GATEWAY = "ALTER TABLE audit ADD COLUMN decision_id TEXT NOT NULL DEFAULT ''"
STORE_SCHEMA = Schema("sensors", {"sqlite": [SCHEMA, LINK_TO_GATEWAY]})

DB_FILENAME = "sensors.db"


class SensorDatabase:
    """The sensors' store behind the storage seam; a blocking API for the sync code that uses it.

    Shared (rollback journal, no mmapped -shm): the CLI grants consent while a server has the file open.
    Every change is committed before it returns.
    """

    def __init__(self, data_dir: Path | str) -> None:
        self.path = Path(data_dir) / DB_FILENAME
        self._db = open_database(self.path, "sensors", SHARED)
        self._db.migrate_blocking(STORE_SCHEMA)

    def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        return self._db.write_blocking(sql, tuple(params)).rowcount

    def insert(self, sql: str, params: Iterable[Any] = ()) -> int:
        return int(self._db.write_blocking(sql, tuple(params)).lastrowid or 0)

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        return self._db.query_dicts_blocking(sql, tuple(params))

    def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            release_blocking(db)
