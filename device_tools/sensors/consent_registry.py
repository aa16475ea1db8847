"""Who may read which sensor, up to which scope, until when. Revocable; optionally expiring.

On a server store (shared by replicas) a consent's times are set and compared on the database's clock
(``storage/shared_clock.py``), as the gateway's consents are: a replica whose clock runs ahead cannot
stretch a consent, nor one whose clock lags use a consent expired everywhere else. A SQLite file uses
``clock``. A server store's rows are signed by the replica (or command) that granted them, over every column
(``storage/row_signature.py``; the database's key for sensor consents): a consent someone with write access
to the database made up, moved to another requester (``*``: every requester), sensor or scope, whose purpose
or retention bound was lifted or whose times were changed, is honoured by no replica (logged).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from pydantic import BaseModel

from device_tools.sensors.database import SensorDatabase
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from sentinel_mcp.storage.row_signature import sign_row, signed_row
from sentinel_mcp.storage.shared_clock import DB_NOW, clocked, on_server_clock

log = logging.getLogger(__name__)
ANY_REQUESTER = "*"
_LIVE = "(expires_at IS NULL OR expires_at > {now})"
# one reading of the clock for both times (expires_at NULL: until revoked, as NULL + seconds is NULL)
_GRANT = (
    "INSERT INTO sensor_consents (requester, sensor, scope, granted_at, expires_at, granted_by, purpose, "
    "max_retention) "
    # WHERE: so SQLite parses the ON CONFLICT
    "SELECT ?, ?, ?, t.now, t.now + ?, ?, ?, ? FROM (SELECT {now} AS now) t WHERE true "
    "ON CONFLICT (requester, sensor) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at, "
    "expires_at = excluded.expires_at, granted_by = excluded.granted_by, purpose = excluded.purpose, "
    "max_retention = excluded.max_retention RETURNING granted_at, expires_at"
)
PURPOSE = "sensor consent"  # the row signature's purpose
COLUMNS = (
    "requester", "sensor", "scope", "granted_at", "expires_at", "granted_by", "purpose", "max_retention"
)
# a server store: the row written whole with its signature (its times read on the database's clock first)
_GRANT_SIGNED = (
    f"INSERT INTO sensor_consents ({', '.join(COLUMNS)}, mac) VALUES (?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT (requester, sensor) DO UPDATE SET scope = excluded.scope, granted_at = excluded.granted_at, "
    "expires_at = excluded.expires_at, granted_by = excluded.granted_by, purpose = excluded.purpose, "
    "max_retention = excluded.max_retention, mac = excluded.mac RETURNING granted_at, expires_at"
)


class Consent(BaseModel):
    requester: str
    sensor: SensorKind
    scope: Scope
    granted_at: float
    expires_at: float | None
    granted_by: str
    # a remembered yes covers what its question said: this purpose (policy_tag), kept at most this long;
    # None (the owner's grant: CLI, console, the consent tool) covers every purpose and retention
    purpose: str | None = None
    max_retention: int | None = None

    def allows(self, purpose: str, retention: int) -> bool:
        """Whether this consent covers a read for ``purpose`` whose reading is kept ``retention`` seconds."""
        return (self.purpose is None or self.purpose == purpose) and (
            self.max_retention is None or retention <= self.max_retention
        )


class ConsentRegistry:
    def __init__(self, db: SensorDatabase, clock: Callable[[], float] = time.time,
                 on_narrowed: Callable[[str, SensorKind | None], None] | None = None) -> None:
        """``on_narrowed(requester, sensor)``: told after every revoke and grant (a grant may narrow the
        scope), so what was kept under the old consent goes with it (the bridge's reading vault)."""
        self._db, self._clock, self._on_narrowed = db, clock, on_narrowed

    def grant(self, requester: str, sensor: SensorKind, scope: Scope, expires_in: float | None = None,
              granted_by: str = "cli", *, purpose: str | None = None,
              max_retention: int | None = None) -> Consent:
        """``purpose``/``max_retention``: what the person was asked about (a remembered yes); None: any."""
        if not requester or "\x00" in requester or "\x00" in granted_by:
            raise ValueError("requester must not be empty or contain NUL characters")
        if purpose is not None and (not isinstance(purpose, str) or not purpose or "\x00" in purpose):
            raise ValueError("purpose must be a non-empty text without NUL characters")
        if max_retention is not None and (
            isinstance(max_retention, bool) or not isinstance(max_retention, int) or max_retention < 0
        ):
            raise ValueError("max_retention must be a whole number of seconds, 0 or more")
        # NaN passes `<= 0` and SQLite stores it as NULL ("until revoked"); inf never expires either
        if expires_in is not None and (
            isinstance(expires_in, bool) or not isinstance(expires_in, (int, float))
            or not math.isfinite(expires_in) or expires_in <= 0
        ):
            raise ValueError("expires_in must be a finite positive number of seconds")
        if self._db.shared:  # signed: the clock read first (one reading for both times), then the whole row
            t = float(self._db.query(f"SELECT {DB_NOW} AS now")[0]["now"])
            row = (requester, sensor.value, scope.value, t, None if expires_in is None else t + expires_in,
                   granted_by, purpose, max_retention)
            rows = self._db.returning(_GRANT_SIGNED, (*row, sign_row(self._db.row_key, PURPOSE, row)))
        else:
            now, at = (DB_NOW, ()) if on_server_clock(self._db) else ("?", (self._clock(),))
            rows = self._db.returning(
                _GRANT.format(now=now),
                (requester, sensor.value, scope.value, expires_in, granted_by, purpose, max_retention, *at),
            )
        granted, expires = rows[0]  # as stored (on the database's clock on a server store)
        self._narrowed(requester, sensor)
        return Consent(
            requester=requester,
            sensor=sensor,
            scope=scope,
            granted_at=float(granted),
            expires_at=None if expires is None else float(expires),
            granted_by=granted_by,
            purpose=purpose,
            max_retention=max_retention,
        )

    def revoke(self, requester: str, sensor: SensorKind | None = None) -> int:
        if "\x00" in requester:
            return 0  # no stored name holds a NUL (PostgreSQL's text cannot)
        if sensor is None:
            removed = self._db.execute("DELETE FROM sensor_consents WHERE requester=?", (requester,))
        else:
            removed = self._db.execute(
                "DELETE FROM sensor_consents WHERE requester=? AND sensor=?", (requester, sensor.value)
            )
        self._narrowed(requester, sensor)  # also when nothing was stored: a one-request read's kept reading
        return removed

    def _narrowed(self, requester: str, sensor: SensorKind | None) -> None:
        if self._on_narrowed is not None:
            self._on_narrowed(requester, sensor)

    def current(self, requester: str, sensor: SensorKind) -> Consent | None:
        """The live consent for this requester (or for any requester), None if absent or expired."""
        live = self.live(requester, sensor)
        return live[0] if live else None

    def live(self, requester: str, sensor: SensorKind) -> list[Consent]:
        """The live consents that may cover this requester (its own, the any-requester one), best first: its
        own before any requester's, the wider scope first. Both are looked at: a purpose-bound yes of its
        own must not hide the owner's grant to any requester."""
        if "\x00" in requester:
            return []
        rows = self._db.query(
            *clocked(
                self._db,
                f"SELECT * FROM sensor_consents WHERE requester IN (?, ?) AND sensor=? AND {_LIVE}",
                (requester, ANY_REQUESTER, sensor.value),
                3,
                self._clock,
            )
        )
        live = [
            c
            for c in (self._checked(r) for r in rows)
            if c is not None and c.requester in (requester, ANY_REQUESTER)
        ]
        return sorted(live, key=lambda c: (c.requester == requester, c.scope.level), reverse=True)

    def list(self, requester: str | None = None, include_expired: bool = False) -> list[Consent]:
        sql = "SELECT * FROM sensor_consents WHERE 1=1"
        params: tuple[str | float, ...] = ()
        if requester is not None:
            if "\x00" in requester:
                return []
            sql += " AND requester=?"
            params = (requester,)
        if not include_expired:
            sql, params = clocked(self._db, sql + f" AND {_LIVE}", params, len(params), self._clock)
        rows = self._db.query(sql + " ORDER BY requester, sensor", params)
        return [c for c in (self._checked(r) for r in rows) if c is not None]

    def _checked(self, r: dict[str, object]) -> Consent | None:
        """``_checked``; on a server store first the row's signature: one no replica of this cluster signed
        (made up, moved, altered in SQL) is logged and never honoured."""
        if self._db.shared and not signed_row(self._db.row_key, r.get("mac"), PURPOSE,
                                              tuple(r.get(c) for c in COLUMNS)):
            log.warning("sensor consent row refused (not signed in this cluster): requester=%r sensor=%r",
                        str(r.get("requester"))[:80], str(r.get("sensor"))[:40])
            return None
        return _checked(r)


def _checked(r: dict[str, object]) -> Consent | None:
    """A stored row as a consent, or None (never honoured) when it is malformed: a shared database is written
    by
    other processes and people, so a row with an unknown sensor or scope, a wrong type or an impossible time
    is
    refused, not guessed at (type-strict: no coercion of text to numbers)."""
    granted, expires = r.get("granted_at"), r.get("expires_at")
    texts = all(
        isinstance(r.get(k), str) and r.get(k) for k in ("requester", "sensor", "scope", "granted_by")
    )
    times = isinstance(granted, float) and (
        expires is None or (isinstance(expires, float) and expires >= granted)
    )
    known = r.get("sensor") in _SENSORS and r.get("scope") in _SCOPES
    purpose, kept = r.get("purpose"), r.get("max_retention")
    bound = (purpose is None or (isinstance(purpose, str) and bool(purpose))) and (
        kept is None or (isinstance(kept, int) and not isinstance(kept, bool) and kept >= 0)
    )
    if not (texts and times and known and bound):
        log.warning(
            "sensor consent row refused (malformed): requester=%r sensor=%r",
            str(r.get("requester"))[:80],
            str(r.get("sensor"))[:40],
        )
        return None
    return Consent(
        requester=r["requester"],
        sensor=SensorKind(r["sensor"]),
        scope=Scope(r["scope"]),  # type: ignore[arg-type]
        granted_at=granted,
        expires_at=expires,
        granted_by=r["granted_by"],
        purpose=purpose,
        max_retention=kept,
    )  # type: ignore[arg-type]


_SENSORS = frozenset(k.value for k in SensorKind)
_SCOPES = frozenset(s.value for s in Scope)
