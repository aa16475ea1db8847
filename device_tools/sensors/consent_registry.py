"""Who may read which sensor, up to which scope, until when. Revocable; optionally expiring."""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel

from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.kinds import Scope, SensorKind

ANY_REQUESTER = "*"


class Consent(BaseModel):
    requester: str
    sensor: SensorKind
    scope: Scope
    granted_at: float
    expires_at: float | None
    granted_by: str


class ConsentRegistry:
    def __init__(self, db: SensorDatabase, clock: Callable[[], float] = time.time) -> None:
        self._db, self._clock = db, clock

    def grant(self, requester: str, sensor: SensorKind, scope: Scope, expires_in: float | None = None,
              granted_by: str = "cli") -> Consent:
        if not requester:
            raise ValueError("requester must not be empty")
        if expires_in is not None and expires_in <= 0:
            raise ValueError("expires_in must be a positive number of seconds")
        now = self._clock()
        expires_at = now + expires_in if expires_in is not None else None
        self._db.execute(
            "INSERT INTO consents(requester, sensor, scope, granted_at, expires_at, granted_by) VALUES (?,?,?,?,?,?) "
            "ON CONFLICT(requester, sensor) DO UPDATE SET scope=excluded.scope, granted_at=excluded.granted_at, "
            "expires_at=excluded.expires_at, granted_by=excluded.granted_by",
            (requester, sensor.value, scope.value, now, expires_at, granted_by))
        return Consent(requester=requester, sensor=sensor, scope=scope, granted_at=now, expires_at=expires_at,
                       granted_by=granted_by)

    def revoke(self, requester: str, sensor: SensorKind | None = None) -> int:
        if sensor is None:
            return self._db.execute("DELETE FROM consents WHERE requester=?", (requester,))
        return self._db.execute("DELETE FROM consents WHERE requester=? AND sensor=?", (requester, sensor.value))

    def current(self, requester: str, sensor: SensorKind) -> Consent | None:
        """The live consent for this requester (or for any requester), None if absent or expired."""
        rows = self._db.query(
            "SELECT * FROM consents WHERE requester IN (?, ?) AND sensor=? AND (expires_at IS NULL OR expires_at > ?)",
            (requester, ANY_REQUESTER, sensor.value, self._clock()))
        best = sorted((_row(r) for r in rows), key=lambda c: (c.requester == requester, c.scope.level), reverse=True)
        return best[0] if best else None

    def list(self, requester: str | None = None, include_expired: bool = False) -> list[Consent]:
        sql, params = "SELECT * FROM consents WHERE 1=1", []
        if requester is not None:
            sql += " AND requester=?"
            params.append(requester)
        if not include_expired:
            sql += " AND (expires_at IS NULL OR expires_at > ?)"
            params.append(self._clock())
        return [_row(r) for r in self._db.query(sql + " ORDER BY requester, sensor", params)]


def _row(r: object) -> Consent:
    return Consent(requester=r["requester"], sensor=SensorKind(r["sensor"]), scope=Scope(r["scope"]),  # type: ignore[index]
                   granted_at=r["granted_at"], expires_at=r["expires_at"], granted_by=r["granted_by"])  # type: ignore[index]
