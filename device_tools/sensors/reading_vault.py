"""Readings kept for their retention period and then deleted.

The expiry is stored with each reading, so deletion survives a restart: the vault sweeps when it opens,
periodically while running, and never returns an expired row even between sweeps. On a server store (shared
by replicas) a reading's times are set and compared on the database's clock (``storage/shared_clock.py``): a
replica whose clock runs ahead neither stretches a retention nor cuts another's short, and one whose clock
lags neither returns nor keeps a reading expired everywhere else. A SQLite file uses ``clock``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable

from device_tools.sensors import reading_rows
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import StoreUnavailable
from sentinel_mcp.core.sensor_messages import SensorResponse
from sentinel_mcp.storage.shared_clock import DB_NOW, clocked, on_server_clock

log = logging.getLogger(__name__)


# what one requester keeps, its newest first (a retention is a longest keep, never a promise): at the camera's
# pace a day's retention was tens of thousands of photos, all read into memory by one sensor_retained
MAX_KEPT_READINGS = 1000
MAX_KEPT_CHARS = 8_000_000  # of stored JSON: about 80 photos, or 200 scans of 400 access points
MAX_ANSWER_CHARS = 1_000_000  # one sensor_retained answer: its newest readings, and how many it left out
# the requester's readings past either bound, its oldest first (a running count and size, newest first)
_TRIM = (
    "DELETE FROM sensor_readings WHERE id IN (SELECT id FROM (SELECT id, COUNT(*) OVER w AS n, "
    "SUM(LENGTH(response)) OVER w AS size FROM sensor_readings WHERE requester=? "
    "WINDOW w AS (ORDER BY id DESC)) t WHERE n > ? OR size > ?)"
)
Covered = Callable[[str, str, str], bool]  # (requester, sensor, scope) -> a live consent covers it
# one reading of the clock for both times
# a server store's: the times read on the database's clock first, so that they are signed with the row
_STORE_SIGNED = (
    "INSERT INTO sensor_readings (requester, task_id, sensor, scope, response, stored_at, expires_at, mac) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"
)
_STORE = (
    "INSERT INTO sensor_readings (requester, task_id, sensor, scope, response, stored_at, expires_at) "
    "SELECT ?, ?, ?, ?, ?, t.now, t.now + ? FROM (SELECT {now} AS now) t RETURNING id"
)


class ReadingVault:
    def __init__(self, db: SensorDatabase, clock: Callable[[], float] = time.time,
                 covered: Covered | None = None) -> None:
        """``covered``: whether a live consent still covers a requester's readings of a sensor at a scope; the
        sweep deletes those it does not (a consent that ran out tells nobody)."""
        self._db, self._clock, self._covered = db, clock, covered
        try:
            self.sweep()  # whatever expired while we were not running goes first
        except StoreUnavailable as e:  # a shared server down at start: the sweeper's next round does it
            log.warning("retention sweep at start skipped: %s", e)

    def store(
        self, requester: str, sensor: str, scope: str, response: SensorResponse, retention: int
    ) -> int | None:
        if retention <= 0:
            return None
        if on_server_clock(self._db):
            now = self._db.query(f"SELECT {DB_NOW} AS now")[0]["now"]
            values = (requester, response.task_id, sensor, scope, response.model_dump_json(), float(now),
                      float(now) + retention)
            stored = self._db.insert(_STORE_SIGNED, (*values, reading_rows.mac(self._db.row_key, values)))
        else:
            stored = self._db.insert(
                _STORE.format(now="?"),
                (requester, response.task_id, sensor, scope, response.model_dump_json(), retention,
                 self._clock()),
            )
        self._db.execute(_TRIM, (requester, MAX_KEPT_READINGS, MAX_KEPT_CHARS))
        return stored

    def retained_within(self, requester: str,
                        task_id: str | None = None) -> tuple[list[dict[str, object]], int]:
        """``requester``'s newest kept readings that fit one answer (``MAX_ANSWER_CHARS`` of JSON), in the
        order they were read, and how many older ones it left out."""
        readings = self.retained(requester, task_id)
        size, first = 2, len(readings)  # "[]"
        while first > 0:
            size += len(json.dumps(readings[first - 1])) + 2  # ", " between items
            if size > MAX_ANSWER_CHARS:
                break
            first -= 1
        return readings[first:], first

    def retained(self, requester: str | None = None, task_id: str | None = None) -> list[dict[str, object]]:
        sql, clock_params = clocked(
            self._db, "SELECT * FROM sensor_readings WHERE expires_at > {now}", (), 0, self._clock
        )
        params: list[str | float] = list(clock_params)
        if requester is not None:
            sql += " AND requester=?"
            params.append(requester)
        if task_id:
            sql += " AND task_id=?"
            params.append(task_id)
        rows = self._db.query(sql + " ORDER BY id", params)
        if on_server_clock(self._db):  # only what a replica of this cluster kept, as it kept it
            rows = [r for r in rows if reading_rows.verified(self._db.row_key, r)]
        return [
            {
                "id": r["id"],
                "sensor": r["sensor"],
                "scope": r["scope"],
                "requester": r["requester"],
                "expires_at": r["expires_at"],
                "response": json.loads(r["response"]),
            }
            for r in rows
        ]

    def held(self, requester: str | None, sensor: str | None) -> list[tuple[str, str, str]]:
        """Who keeps readings of which sensor at which scope (``None``: any requester, any sensor)."""
        sql = "SELECT DISTINCT requester, sensor, scope FROM sensor_readings WHERE 1=1"
        params: list[str] = []
        for column, value in (("requester", requester), ("sensor", sensor)):
            if value is not None:
                sql += f" AND {column}=?"
                params.append(value)
        return [(r["requester"], r["sensor"], r["scope"]) for r in self._db.query(sql, params)]

    def forget(self, requester: str, sensor: str, scope: str) -> int:
        return self._db.execute(
            "DELETE FROM sensor_readings WHERE requester=? AND sensor=? AND scope=?",
            (requester, sensor, scope),
        )

    def count_all(self) -> int:
        """Rows physically present, expired or not (what the sweeper has not yet deleted)."""
        return int(self._db.query("SELECT COUNT(*) AS n FROM sensor_readings")[0]["n"])

    def forget_uncovered(self, requester: str | None = None, sensor: str | None = None) -> int:
        """Delete the kept readings (of ``requester``, of ``sensor``; None: all) no live consent covers."""
        if self._covered is None:
            return 0
        return sum(self.forget(holder, kind, scope) for holder, kind, scope in self.held(requester, sensor)
                   if not self._covered(holder, kind, scope))

    def sweep(self) -> int:
        deleted = self._db.execute(
            *clocked(self._db, "DELETE FROM sensor_readings WHERE expires_at <= {now}", (), 0, self._clock)
        )
        deleted += self.forget_uncovered()
        if deleted:
            log.info("retention sweep deleted %d reading(s)", deleted)
        return deleted

    async def run_sweeper(self, interval: float) -> None:
        """Sweep forever every ``interval`` seconds (cancel the task to stop)."""
        while True:
            await asyncio.sleep(interval)
            try:
                self.sweep()
            except Exception:  # a locked or vanished file must not kill the sweeper
                log.exception("retention sweep failed; retrying in %s s", interval)
