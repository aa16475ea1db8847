"""One audit row per sensor request: requester, sensor, scope, policy tag, decision, redactions, time, and the
gateway decision it belongs to (``decision_id``). Each row is a ``BuiltinRecord`` first: a typed outcome and
the one redaction path; a row that cannot be written raises ``NotRecorded`` (the request is refused)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import NotRecorded
from sentinel_mcp.core.sensor_messages import iso_utc
from sentinel_mcp.core.decision_record import BuiltinRecord, Outcome


class AuditLog:
    def __init__(self, db: SensorDatabase, clock: Callable[[], float] = time.time) -> None:
        self._db, self._clock = db, clock

    def record(self, *, requester: str, sensor: str, scope: str, policy_tag: str, task_id: str, decision: str,
               reason: str, redactions: list[str], retention: int, decision_id: str = "") -> int:
        try:
            row = BuiltinRecord(
                "sensors",
                Outcome(decision),
                decision_id,
                reason=reason,
                details={"policy_tag": policy_tag, "task_id": task_id},
                at=self._clock(),
            ).redacted()
            return self._db.insert(
                "INSERT INTO sensor_audit(at, requester, sensor, scope, policy_tag, task_id, decision, "
                "reason, redactions, "
                "retention, decision_id) VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING id",
                (
                    row["recorded_at"],
                    requester,
                    sensor,
                    scope,
                    row["policy_tag"],
                    row["task_id"],
                    row["outcome"],
                    row["reason"],
                    json.dumps(redactions),
                    retention,
                    row["decision_id"],
                ),
            )
        except Exception as e:  # noqa: BLE001 - any failure to record refuses the request (fail closed)
            raise NotRecorded(
                f"the sensor request could not be recorded ({type(e).__name__}: {e}); nothing was returned"
            ) from None

    def rows(self, requester: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM sensor_audit", []
        if requester is not None:
            sql += " WHERE requester=?"
            params.append(requester)
        rows = self._db.query(sql + " ORDER BY id DESC LIMIT ?", [*params, limit])
        return [
            dict(r) | {"time": iso_utc(r["at"]), "redactions": json.loads(r["redactions"])}
            for r in reversed(rows)
        ]
