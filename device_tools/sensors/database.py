"""The sensors' SQLite file (consents, retained readings, audit), shared by the server and the CLI.

WAL plus a busy timeout let the CLI grant consent while a server has the file open.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

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
);
"""

DB_FILENAME = "sensors.db"


class SensorDatabase:
    def __init__(self, data_dir: Path | str) -> None:
        self.path = Path(data_dir) / DB_FILENAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # one connection used from the event loop and worker threads, serialised by the lock
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=10, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=10000")
        self._conn.execute("PRAGMA synchronous=NORMAL")  # WAL: no corruption risk, no fsync per audit row
        self._conn.executescript(SCHEMA)

    def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        with self._lock:
            cur = self._conn.execute(sql, tuple(params))
            return cur.rowcount

    def insert(self, sql: str, params: Iterable[Any] = ()) -> int:
        with self._lock:
            cur = self._conn.execute(sql, tuple(params))
            return int(cur.lastrowid or 0)

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self._conn.execute(sql, tuple(params))
            cur.row_factory = sqlite3.Row
            return cur.fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()
