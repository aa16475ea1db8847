"""The sensors' store (consents, retained readings, audit), shared by the server and the CLI.

Behind the storage seam: a SQLite file in the built-in's data dir (the embedded default), or, when
``sentinel.store`` names a ``postgresql://`` database, that database, shared by every replica (a consent
granted through one replica is honoured by all; a revoke is refused everywhere at once; retention sweeps run
on whichever replica gets there, and deleting an expired row twice is harmless). One schema: the tables are
``sensor_*`` on both backends (the shared database holds the gateway's own ``audit`` and ``consents``).

A shared server that cannot be reached when the built-in starts does not stop it: it starts degraded (every
call refused with ``store_unavailable`` and the cause; the database's health, in ``/healthz``, says why) and
sets its tables up by itself at the first call once the server is back (at most one attempt per
``RETRY_SECONDS``, so a refused call costs no connection attempt of its own while the server is down).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from device_tools.sensors.errors import StoreUnavailable
from sentinel_mcp.storage.row_signature import PROCESS_KEY
from sentinel_mcp.storage import Schema, StorageError, open_database
from sentinel_mcp.storage.location import is_server_url
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
# 3: the names the shared database can hold next to the gateway's own tables (the same on both backends)
SENSOR_NAMES = """
ALTER TABLE consents RENAME TO sensor_consents;
ALTER TABLE readings RENAME TO sensor_readings;
ALTER TABLE audit RENAME TO sensor_audit
"""
_POSTGRES = """
CREATE TABLE sensor_consents (
    requester  TEXT NOT NULL,
    sensor     TEXT NOT NULL,
    scope      TEXT NOT NULL,
    granted_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION,
    granted_by TEXT NOT NULL,
    PRIMARY KEY (requester, sensor)
);
CREATE TABLE sensor_readings (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    requester  TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    sensor     TEXT NOT NULL,
    scope      TEXT NOT NULL,
    response   TEXT NOT NULL,
    stored_at  DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX sensor_readings_expiry ON sensor_readings(expires_at);
CREATE TABLE sensor_audit (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at          DOUBLE PRECISION NOT NULL,
    requester   TEXT NOT NULL,
    sensor      TEXT NOT NULL,
    scope       TEXT NOT NULL,
    policy_tag  TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    decision    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    redactions  TEXT NOT NULL,
    retention   INTEGER NOT NULL,
    decision_id TEXT NOT NULL DEFAULT ''
)
"""
# 4 (sqlite), 2 (postgres): a remembered yes names what the question said, the purpose and the longest
# retention; NULL on both (the owner's grant, a row from before) covers every purpose and retention
CONSENT_PURPOSE = """
ALTER TABLE sensor_consents ADD COLUMN purpose TEXT;
ALTER TABLE sensor_consents ADD COLUMN max_retention INTEGER
"""
# 3 (postgres): each consent signed by the replica (or command) that granted it (``consent_registry.py``);
# rows from before are unsigned and not honoured (the person is asked again)
SIGNED_CONSENTS = "ALTER TABLE sensor_consents ADD COLUMN IF NOT EXISTS mac TEXT NOT NULL DEFAULT ''"
# 5 (sqlite), 4 (postgres): the coarse cell each scope showed last, per source (``cell_store.py``): one for
# every replica and past a restart
CELLS = """
CREATE TABLE IF NOT EXISTS sensor_cells (
    source    TEXT NOT NULL,
    scope     TEXT NOT NULL,
    latitude  DOUBLE PRECISION NOT NULL,
    longitude DOUBLE PRECISION NOT NULL,
    mac       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (source, scope)
)
"""
# 5 (postgres): each retained reading signed by the replica that kept it (``reading_rows.py``); rows from
# before are unsigned and no longer returned
SIGNED_READINGS = "ALTER TABLE sensor_readings ADD COLUMN IF NOT EXISTS mac TEXT"
STORE_SCHEMA = Schema(
    "sensors",
    {
        "sqlite": [SCHEMA, LINK_TO_GATEWAY, SENSOR_NAMES, CONSENT_PURPOSE, CELLS],
        "postgres": [_POSTGRES, CONSENT_PURPOSE, SIGNED_CONSENTS, CELLS, SIGNED_READINGS],
    },
)

DB_FILENAME = "sensors.db"
RETRY_SECONDS = 1.0


def _unavailable(e: StorageError) -> StoreUnavailable:
    return StoreUnavailable(f"the sensors' store is unavailable, so the call is refused (fail closed): {e}")


class SensorDatabase:
    """The sensors' store behind the storage seam; a blocking API for the sync code that uses it.

    Shared (rollback journal, no mmapped -shm): the CLI grants consent while a server has the file open.
    Every change is committed before it returns.
    """

    def __init__(self, data_dir: Path | str, store: str | None = None, key: bytes | None = None) -> None:
        """``store``: a ``postgresql://`` URL (``sentinel.store``) to share with the other replicas; None
        keeps the SQLite file in ``data_dir``. ``key``: what a server store's consents are signed with (the
        cluster's, ``SharedStore.key("sensor consent")``; None: this process's own)."""
        self.row_key = key if key is not None else PROCESS_KEY
        self.path: Path | str = store if store and is_server_url(store) else Path(data_dir) / DB_FILENAME
        self._db = open_database(self.path, "sensors", SHARED)
        # which clock times are set and compared on (storage/shared_clock.py); known while a server is down
        self.backend: str = getattr(self._db, "backend", "sqlite")
        self.problem: str | None = None  # why the store is not usable yet (a server down at start)
        self._next_try = 0.0
        self._lock = threading.Lock()
        try:
            self._db.migrate_blocking(STORE_SCHEMA)
        except StorageError as e:
            if not self.shared:  # a local file that cannot be opened is a broken install: say so at start
                self.close()
                raise
            self.problem = str(e)
            self._next_try = time.monotonic() + RETRY_SECONDS
        except BaseException:
            self.close()
            raise

    def _ready(self) -> Any:
        """The database once its tables are set up; ``StoreUnavailable`` (with the cause) until then."""
        if self.problem is None:
            return self._db
        with self._lock:
            if self.problem is not None and time.monotonic() >= self._next_try:
                self._next_try = time.monotonic() + RETRY_SECONDS
                try:
                    self._db.migrate_blocking(STORE_SCHEMA)
                    self.problem = None
                except StorageError as e:
                    self.problem = str(e)
            if self.problem is not None:
                raise StoreUnavailable(
                    f"the sensors' store is unavailable, so the call is refused (fail closed): {self.problem}"
                )
        return self._db

    @property
    def shared(self) -> bool:
        return self.backend != "sqlite"

    def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        try:
            return self._ready().write_blocking(sql, tuple(params)).rowcount
        except StorageError as e:
            raise _unavailable(e) from None

    def returning(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """A write with a ``RETURNING`` clause: the rows it gave (what was stored, on either backend)."""
        try:
            return self._ready().write_blocking(sql, tuple(params)).rows
        except StorageError as e:
            raise _unavailable(e) from None

    def insert(self, sql: str, params: Iterable[Any] = ()) -> int:
        """An ``INSERT ... RETURNING id``: the new row's id on either backend."""
        rows = self.returning(sql, params)
        return int(rows[0][0]) if rows else 0

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        try:
            return self._ready().query_dicts_blocking(sql, tuple(params))
        except StorageError as e:
            raise _unavailable(e) from None

    def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            release_blocking(db)
