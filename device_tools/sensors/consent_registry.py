"""Who may read which sensor, up to which scope, until when. Revocable; optionally expiring."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from pydantic import BaseModel

from device_tools.sensors.database import SensorDatabase
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

log = logging.getLogger(__name__)
ANY_REQUESTER = "*"


class Consent(BaseModel):
    requester: str
    sensor: SensorKind
    scope: Scope
    granted_at: float
    expires_at: float | None
    granted_by: str


class ConsentRegistry:
    def __init__(self, db: SensorDatabase, clock: Callable[[], float] = time.time,
                 on_narrowed: Callable[[str, SensorKind | None], None] | None = None) -> None:
        """``on_narrowed(requester, sensor)``: told after every revoke and grant (a grant may narrow the
        scope), so what was kept under the old consent goes with it (the bridge's reading vault)."""
        self._db, self._clock, self._on_narrowed = db, clock, on_narrowed

    def grant(self, requester: str, sensor: SensorKind, scope: Scope, expires_in: float | None = None,
              granted_by: str = "cli") -> Consent:
        if not requester or "\x00" in requester or "\x00" in granted_by:
            raise ValueError("requester must not be empty or contain NUL characters")
        # NaN passes `<= 0` and SQLite stores it as NULL ("until revoked"); inf never expires either
        if expires_in is not None and (
            isinstance(expires_in, bool) or not isinstance(expires_in, (int, float))
            or not math.isfinite(expires_in) or expires_in <= 0
        ):
            raise ValueError("expires_in must be a finite positive number of seconds")
        now = self._clock()
        expires_at = now + expires_in if expires_in is not None else None
        self._db.execute(
            "INSERT INTO sensor_consents(requester, sensor, scope, granted_at, expires_at, granted_by) "
            "VALUES (?,?,?,?,?,?) "
            "ON CONFLICT(requester, sensor) DO UPDATE SET scope=excluded.scope, "
            "granted_at=excluded.granted_at, "
            "expires_at=excluded.expires_at, granted_by=excluded.granted_by",
            (requester, sensor.value, scope.value, now, expires_at, granted_by),
        )
        self._narrowed(requester, sensor)
        return Consent(
            requester=requester,
            sensor=sensor,
            scope=scope,
            granted_at=now,
            expires_at=expires_at,
            granted_by=granted_by,
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
        if "\x00" in requester:
            return None
        rows = self._db.query(
            "SELECT * FROM sensor_consents WHERE requester IN (?, ?) AND sensor=? AND (expires_at IS NULL OR "
            "expires_at > ?)",
            (requester, ANY_REQUESTER, sensor.value, self._clock()),
        )
        live = [
            c
            for c in (_checked(r) for r in rows)
            if c is not None and c.requester in (requester, ANY_REQUESTER)
        ]
        best = sorted(live, key=lambda c: (c.requester == requester, c.scope.level), reverse=True)
        return best[0] if best else None

    def list(self, requester: str | None = None, include_expired: bool = False) -> list[Consent]:
        sql = "SELECT * FROM sensor_consents WHERE 1=1"
        params: list[str | float] = []
        if requester is not None:
            if "\x00" in requester:
                return []
            sql += " AND requester=?"
            params.append(requester)
        if not include_expired:
            sql += " AND (expires_at IS NULL OR expires_at > ?)"
            params.append(self._clock())
        rows = self._db.query(sql + " ORDER BY requester, sensor", params)
        return [c for c in (_checked(r) for r in rows) if c is not None]


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
    if not (texts and times and known):
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
    )  # type: ignore[arg-type]


_SENSORS = frozenset(k.value for k in SensorKind)
_SCOPES = frozenset(s.value for s in Scope)
