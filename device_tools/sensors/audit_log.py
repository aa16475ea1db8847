"""One audit row per sensor request: requester, sensor, scope, policy tag, decision, redactions, time."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.messages import iso_utc


class AuditLog:
    def __init__(self, db: SensorDatabase, clock: Callable[[], float] = time.time) -> None:
        self._db, self._clock = db, clock

    def record(self, *, requester: str, sensor: str, scope: str, policy_tag: str, task_id: str, decision: str,
               reason: str, redactions: list[str], retention: int) -> int:
        return self._db.insert(
            "INSERT INTO audit(at, requester, sensor, scope, policy_tag, task_id, decision, reason, redactions, "
            "retention) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (self._clock(), requester, sensor, scope, policy_tag, task_id, decision, reason, json.dumps(redactions),
             retention))

    def rows(self, requester: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM audit", []
        if requester is not None:
            sql += " WHERE requester=?"
            params.append(requester)
        rows = self._db.query(sql + " ORDER BY id DESC LIMIT ?", [*params, limit])
        return [dict(r) | {"time": iso_utc(r["at"]), "redactions": json.loads(r["redactions"])} for r in reversed(rows)]
