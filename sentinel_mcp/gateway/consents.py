"""Consents to read personal data: per principal, kind of data and purpose; revocable, expiring, kept on disk.

The same model as the sensors' consents: the user grants a principal access to a kind of data (messages,
contacts, a traveller's profile, ...) for a purpose, through an elicitation Sentinel asks ("this call" or
"until revoked") or with ``sentinel-mcp consent grant``; ``revoke`` ends it. Every grant and revoke is kept
in the ``consent_log`` table, and every read it allows is in the audit log with the consent as its proof.

The book lives behind the storage seam (``consents`` store): every change is committed before it returns, and
a store that cannot be read or written raises ``StorageError`` (the gate then denies: fail closed). Shared
(rollback journal): ``sentinel-mcp consent`` changes it while a gateway runs. With ``sentinel.store`` naming a
``postgresql://`` database the book lives there, one for every replica: nothing is cached, so a consent
granted
through one replica is honoured by the next call on any other, and a revoke is refused everywhere at once.
Rows are checked as they are read (type-strict); a malformed one is never honoured. On a server store a
consent's times are set and compared on the database's clock (``storage/shared_clock.py``): a replica whose
clock runs ahead cannot stretch a consent, nor one whose clock lags use a consent expired everywhere else.
On a server store each row is signed by the replica that granted it (``storage/row_signature.py``, a key from
``sentinel.cluster.seal_key``) over all its columns: a consent someone with write access to the database made
up, moved to another principal, kind or purpose, or whose times were changed, is honoured by no replica.
"""

from __future__ import annotations

import builtins
import logging
import math
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sentinel_mcp.core import process_clock
from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.location import is_server_url
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign_row, signed_row
from sentinel_mcp.storage.shared_clock import DB_NOW, on_server_clock
from sentinel_mcp.storage.open import release_blocking
from sentinel_mcp.storage.sqlite import SHARED

log = logging.getLogger(__name__)
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
_POSTGRES = """
CREATE TABLE consents (
    principal  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    purpose    TEXT NOT NULL,
    granted_at DOUBLE PRECISION NOT NULL,
    expires_at DOUBLE PRECISION,
    granted_by TEXT NOT NULL,
    PRIMARY KEY (principal, kind, purpose)
);
CREATE TABLE consent_log (
    id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        DOUBLE PRECISION NOT NULL,
    action    TEXT NOT NULL,
    principal TEXT NOT NULL,
    kind      TEXT NOT NULL,
    purpose   TEXT NOT NULL,
    by        TEXT NOT NULL
)
"""
# a server store's rows signed (rows from before: unsigned, not honoured: consent is asked again)
_SIGNED = "ALTER TABLE consents ADD COLUMN IF NOT EXISTS mac TEXT NOT NULL DEFAULT ''"
SCHEMA = Schema("consents", {"sqlite": [_SQL], "postgres": [_POSTGRES, _SIGNED]})
PURPOSE = "consent"  # the row signature's purpose (one per kind of row)
_COLS = "principal, kind, purpose, granted_at, expires_at, granted_by"
# a server store: the times read on the database's clock first, then the row written with them and signed
_GRANT_SIGNED = (
    f"INSERT INTO consents ({_COLS}, mac) VALUES (?,?,?,?,?,?,?) ON CONFLICT (principal, kind, purpose) DO "
    "UPDATE SET granted_at = excluded.granted_at, expires_at = excluded.expires_at, "
    "granted_by = excluded.granted_by, mac = excluded.mac"
)
# a live consent: not expired by the process clock (the database's on a server store), which never goes back;
# and not granted "after now" (before the wall clock was set back and the gateway restarted: how long it has
# lasted is unknown, so it counts only once the clock reaches its grant again, and lives no longer than asked
# for from then)
_LIVE = "(expires_at IS NULL OR expires_at > {now}) AND granted_at <= {now}"
# one reading of the clock for both times (expires_at NULL: until revoked, as NULL + seconds is NULL)
_GRANT = (
    "INSERT INTO consents (principal, kind, purpose, granted_at, expires_at, granted_by) "
    "SELECT ?, ?, ?, t.now, t.now + ?, ? FROM (SELECT {now} AS now) t WHERE true "  # WHERE: SQLite parses ON
    "ON CONFLICT (principal, kind, purpose) DO UPDATE SET granted_at = excluded.granted_at, "
    "expires_at = excluded.expires_at, granted_by = excluded.granted_by RETURNING granted_at, expires_at"
)


def _live(db: Any) -> tuple[str, tuple[float, ...]]:
    """``_LIVE`` and its parameters: the database's clock on a server store (replicas' clocks disagree), else
    the process clock (one machine's, never going back)."""
    if on_server_clock(db):
        return _LIVE.format(now=DB_NOW), ()
    now = process_clock.now()
    return _LIVE.format(now="?"), (now, now)


def _match(principal: str, kind: str | None, purpose: str | None) -> tuple[str, tuple[str, ...]]:
    """The rows of a principal (and kind, and purpose); spelled out rather than ``? IS NULL``, which
    PostgreSQL cannot type."""
    if kind is None:
        return "principal = ?", (principal,)
    if purpose is None:
        return "principal = ? AND kind = ?", (principal, kind)
    return "principal = ? AND kind = ? AND purpose = ?", (principal, kind, purpose)


def _storable(*names: str | None) -> bool:
    """Names a store can hold on every backend (PostgreSQL's text has no NUL; such a name matches no row)."""
    return all(n is None or (isinstance(n, str) and "\x00" not in n) for n in names)


def _whose(principal: str | None) -> tuple[str, tuple[str, ...]]:
    return ("principal = ?", (principal,)) if principal is not None else ("1 = 1", ())


class Consent(BaseModel):
    principal: str
    kind: str
    purpose: str
    granted_at: float
    expires_at: float | None
    granted_by: str


class ConsentBook:
    def __init__(self, path: Path | str, key: bytes | None = None) -> None:
        """``path``: the SQLite file, or the ``postgresql://`` URL every replica shares (``sentinel.store``);
        ``key``: what a server store's rows are signed with (``SharedStore.key("consent")``; None: this
        process's own key, so its grants count here only)."""
        self.shared = is_server_url(path)
        self.key = key if key is not None else PROCESS_KEY
        self.path: Path | str = path if self.shared else Path(path)
        self._db: Any = open_database(self.path, "consents", SHARED)
        try:
            self._db.migrate_blocking(SCHEMA)
        except StorageError:
            # starts degraded: its reads and writes raise, so personal reads are denied until it recovers
            pass

    def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            release_blocking(db)

    def grant(
        self,
        principal: str,
        kind: str,
        purpose: str = ANY_PURPOSE,
        *,
        expires_in: float | None = None,
        by: str = "cli",
    ) -> Consent:
        if not principal or not kind or not purpose:
            raise ValueError("principal, kind and purpose must not be empty")
        if not _storable(principal, kind, purpose, by):
            raise ValueError("principal, kind and purpose must not contain NUL characters")
        # finite too: an infinite one would be stored as Infinity (not JSON when listed); no expiry is None
        if expires_in is not None and not (expires_in > 0 and math.isfinite(expires_in)):
            raise ValueError("expires_in must be a positive finite number of seconds (none: until revoked)")
        # the database's clock on a server store: a replica's own clock neither stretches nor shortens it; on
        # SQLite the process clock it is checked by (stamped by the wall clock, a grant after a step back of
        # the wall clock lost the step from its life, or was expired at once)
        now, at = (DB_NOW, ()) if on_server_clock(self._db) else ("?", (process_clock.now(),))
        grant = Statement(_GRANT.format(now=now), (principal, kind, purpose, expires_in, by, *at))
        if self.shared:  # signed: its times read first (one reading), so the row is written whole
            t = float(self._db.query_blocking(f"SELECT {DB_NOW}")[0][0])
            row = (principal, kind, purpose, t, None if expires_in is None else t + expires_in, by)
            grant = Statement(_GRANT_SIGNED + " RETURNING granted_at, expires_at",
                              (*row, sign_row(self.key, PURPOSE, row)))
            now, at = "?", (t,)
        results = self._db.run_blocking(
            [  # the consent and its log line in one commit
                grant,
                Statement(
                    "INSERT INTO consent_log (at, action, principal, kind, purpose, by) "
                    f"VALUES ({now},?,?,?,?,?)",
                    (*at, "grant", principal, kind, purpose, by),
                ),
            ]
        )
        granted, expires = results[0].rows[0]  # as stored (on the database's clock on a server store)
        return Consent(
            principal=principal,
            kind=kind,
            purpose=purpose,
            granted_at=float(granted),
            expires_at=None if expires is None else float(expires),
            granted_by=by,
        )

    def revoke(
        self, principal: str, kind: str | None = None, purpose: str | None = None, *, by: str = "cli"
    ) -> int:
        """End the principal's consents: every one (no kind), every purpose of a kind (no purpose), or the one
        of that kind and purpose, by its exact text (``*`` is the consent to every purpose, not a pattern).
        A purpose without its kind, or one that is not non-empty text, is refused (ValueError): read as "every
        purpose" it would end consents the person meant to keep."""
        if purpose is not None and (kind is None or not isinstance(purpose, str) or not purpose):
            raise ValueError("a purpose to revoke is non-empty text, given with its kind")
        if not _storable(principal, kind, purpose):
            return 0  # no stored name holds a NUL: nothing to revoke (PostgreSQL cannot even compare it)
        where, params = _match(principal, kind, purpose)
        now, at = (DB_NOW, ()) if on_server_clock(self._db) else ("?", (time.time(),))
        results = self._db.run_blocking(
            [  # log lines and removal in one commit
                Statement(
                    f"INSERT INTO consent_log (at, action, principal, kind, purpose, by) SELECT {now}, "
                    f"'revoke', principal, kind, purpose, ? FROM consents WHERE {where} "
                    "ORDER BY kind, purpose",
                    (*at, by, *params),
                ),
                Statement(f"DELETE FROM consents WHERE {where}", params),
            ]
        )
        return results[1].rowcount

    def current(self, principal: str, kind: str, purpose: str) -> Consent | None:
        """The live consent covering this principal, kind and purpose (its own purpose or every purpose)."""
        if not _storable(principal, kind, purpose):
            return None
        alive, at = _live(self._db)
        rows = self._db.query_blocking(
            f"SELECT {self._cols} FROM consents WHERE principal = ? AND kind = ? AND purpose IN (?, ?) "
            f"AND {alive} ORDER BY purpose = ? DESC",
            (principal, kind, purpose, ANY_PURPOSE, *at, purpose),
        )
        live = [
            c for c in map(self._checked, rows)
            if c is not None and c.principal == principal and c.kind == kind
        ]
        return live[0] if live else None

    def list(self, principal: str | None = None) -> builtins.list[Consent]:
        if not _storable(principal):
            return []
        where, params = _whose(principal)
        alive, at = _live(self._db)
        rows = self._db.query_blocking(
            f"SELECT {self._cols} FROM consents WHERE {where} AND {alive} ORDER BY principal, kind, purpose",
            (*params, *at),
        )
        return [c for c in map(self._checked, rows) if c is not None]

    @property
    def _cols(self) -> str:
        return f"{_COLS}, mac" if self.shared else _COLS

    def _checked(self, row: tuple[Any, ...]) -> Consent | None:
        """``_checked``; on a server store first its signature (its MAC last): a row no replica of this
        cluster signed is logged and never honoured."""
        if not self.shared:
            return _checked(row)
        if not signed_row(self.key, row[-1], PURPOSE, row[:-1]):
            log.warning("consent row refused (not signed in this cluster): %r", str(row[:3])[:120])
            return None
        return _checked(row[:-1])

    def log(self, principal: str | None = None) -> builtins.list[dict[str, Any]]:
        if not _storable(principal):
            return []
        where, params = _whose(principal)
        rows = self._db.query_blocking(
            f"SELECT at, action, principal, kind, purpose, by FROM consent_log WHERE {where} ORDER BY id",
            params,
        )
        return [dict(zip(("at", "action", "principal", "kind", "purpose", "by"), r)) for r in rows]


def _checked(row: tuple[Any, ...]) -> Consent | None:
    """A stored row as a consent, or None (never honoured): the shared database is written by other processes
    and
    people, so a row of the wrong shape, with empty or non-text names or times that are not numbers (no
    coercion)
    or expire before they were granted, is refused, not guessed at."""
    if len(row) == 6:
        p, k, pur, g, e, by = row
        texts = all(isinstance(v, str) and v for v in (p, k, pur, by))
        times = type(g) is float and (e is None or (type(e) is float and e >= g))
        if texts and times:
            return Consent(principal=p, kind=k, purpose=pur, granted_at=g, expires_at=e, granted_by=by)
    log.warning("consent row refused (malformed): %r", str(row[:3])[:120])
    return None
