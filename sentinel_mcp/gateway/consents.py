"""Consents to read personal data: per principal, kind of data and purpose; revocable, expiring, kept on disk.

The same model as the sensors' consents: the user grants a principal access to a kind of data (messages,
contacts, a traveller's profile, ...) for a purpose, through an elicitation Sentinel asks ("this call" or
"until revoked") or with ``sentinel-mcp consent grant``; ``revoke`` ends it. Every grant and revoke is kept
in the ``consent_log`` table, and every read it allows is in the audit log with the consent as its proof.

The book lives behind the storage seam (``consents`` store): every change is committed before it returns, and
a store that cannot be read or written raises ``StorageError`` (the gate then denies: fail closed). Shared
(rollback journal): ``sentinel-mcp consent`` changes it while a gateway runs.
"""

from __future__ import annotations

import builtins

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.open import release_blocking
from sentinel_mcp.storage.sqlite import SHARED

ANY_PURPOSE = "*"
_SQL = """
CREATE TABLE IF NOT EXISTS consents (
    principal  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    purpose    TEXT NOT NULL,   -- '*' covers every purpose
    granted_at REAL NOT NULL,
    expires_at REAL,            -- NULL: until revoked
    granted_by TEXT NOT NULL,   -- elicitation | cli
    PRIMARY KEY (principal, kind, purpose)
);
CREATE TABLE IF NOT EXISTS consent_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        REAL NOT NULL,
    action    TEXT NOT NULL,    -- grant | revoke
    principal TEXT NOT NULL,
    kind      TEXT NOT NULL,
    purpose   TEXT NOT NULL,
    by        TEXT NOT NULL
)
"""
SCHEMA = Schema("consents", {"sqlite": [_SQL]})
_MATCH = "principal = ? AND (? IS NULL OR kind = ?)"


class Consent(BaseModel):
    principal: str
    kind: str
    purpose: str
    granted_at: float
    expires_at: float | None
    granted_by: str


class ConsentBook:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: Any = open_database(self.path, "consents", SHARED)
        try:
            self._db.migrate_blocking(SCHEMA)
        except StorageError:
            pass  # starts degraded: its reads and writes raise, so personal reads are denied until it recovers

    def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            release_blocking(db)

    def grant(self, principal: str, kind: str, purpose: str = ANY_PURPOSE, *, expires_in: float | None = None,
              by: str = "cli") -> Consent:
        if not principal or not kind or not purpose:
            raise ValueError("principal, kind and purpose must not be empty")
        if expires_in is not None and not expires_in > 0:
            raise ValueError("expires_in must be a positive number of seconds")
        now = time.time()
        expires = now + expires_in if expires_in is not None else None
        self._db.run_blocking([  # the consent and its log line in one commit
            Statement("INSERT INTO consents VALUES (?,?,?,?,?,?) ON CONFLICT (principal, kind, purpose) DO UPDATE "
                      "SET granted_at=excluded.granted_at, expires_at=excluded.expires_at, "
                      "granted_by=excluded.granted_by", (principal, kind, purpose, now, expires, by)),
            Statement("INSERT INTO consent_log (at, action, principal, kind, purpose, by) VALUES (?,?,?,?,?,?)",
                      (now, "grant", principal, kind, purpose, by))])
        return Consent(principal=principal, kind=kind, purpose=purpose, granted_at=now, expires_at=expires,
                       granted_by=by)

    def revoke(self, principal: str, kind: str | None = None, *, by: str = "cli") -> int:
        params = (principal, kind, kind)
        results = self._db.run_blocking([  # log lines and removal in one commit
            Statement("INSERT INTO consent_log (at, action, principal, kind, purpose, by) SELECT ?, 'revoke', "
                      f"principal, kind, purpose, ? FROM consents WHERE {_MATCH} ORDER BY kind, purpose",
                      (time.time(), by, *params)),
            Statement(f"DELETE FROM consents WHERE {_MATCH}", params)])
        return results[1].rowcount

    def current(self, principal: str, kind: str, purpose: str) -> Consent | None:
        """The live consent covering this principal, kind and purpose (its own purpose or every purpose)."""
        rows = self._db.query_blocking(
            "SELECT * FROM consents WHERE principal = ? AND kind = ? AND purpose IN (?, ?) "
            "AND (expires_at IS NULL OR expires_at > ?) ORDER BY purpose = ? DESC",
            (principal, kind, purpose, ANY_PURPOSE, time.time(), purpose))
        return _consent(rows[0]) if rows else None

    def list(self, principal: str | None = None) -> builtins.list[Consent]:
        rows = self._db.query_blocking("SELECT * FROM consents WHERE (? IS NULL OR principal = ?) AND "
                                       "(expires_at IS NULL OR expires_at > ?) ORDER BY principal, kind, purpose",
                                       (principal, principal, time.time()))
        return [_consent(r) for r in rows]

    def log(self, principal: str | None = None) -> builtins.list[dict[str, Any]]:
        rows = self._db.query_blocking("SELECT at, action, principal, kind, purpose, by FROM consent_log WHERE "
                                       "(? IS NULL OR principal = ?) ORDER BY id", (principal, principal))
        return [dict(zip(("at", "action", "principal", "kind", "purpose", "by"), r)) for r in rows]


def _consent(row: tuple[Any, ...]) -> Consent:
    p, k, pur, g, e, by = row
    return Consent(principal=p, kind=k, purpose=pur, granted_at=g, expires_at=e, granted_by=by)
