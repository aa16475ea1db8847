"""Replicas on one PostgreSQL store show one coarse cell for a phone that stays put, and a cell written in
SQL by someone without the cluster's key is not taken (it would tell whether the phone lies near it).

Real PostgreSQL; two replicas played by two sensor bridges in this process over their own connections (one
key: the cluster's); the phone a real termux-location subprocess (tests/sensors)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from tests.sensors.conftest import ManualClock
from tests.sensors.test_coarse_location_steady import jitter, phone, shown

from device_tools.sensors.bridge import SensorBridge
from device_tools.sensors.cell_store import CellStore
from device_tools.sensors.database import SensorDatabase
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def url(pg_server) -> str:  # type: ignore[no-untyped-def]
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute('CREATE DATABASE "sensor_cells"')
    return pg_server.url.rsplit("/", 1)[0] + "/sensor_cells"


def sql(url: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)


async def test_replicas_alternated_show_one_cell(url: str, tmp_path: Path) -> None:
    clock = ManualClock()
    a, b = SensorDatabase(tmp_path / "a", url), SensorDatabase(tmp_path / "b", url)
    try:
        fixes = [(37.7851, -122.4149, 40), (37.7849, -122.4151, 40), *jitter(37.785, -122.415, 40, 10)]
        source = phone(tmp_path, fixes)
        bridges = [SensorBridge(source, db, clock=clock, monotonic=clock) for db in (a, b)]
        bridges[0].consents.grant("agent-a", SensorKind.location, Scope.standard)
        cells = []
        for i in range(len(fixes)):
            cells += await shown(bridges[i % 2], clock, Scope.standard, 1)
        assert len(set(cells)) == 1, cells
    finally:
        a.close()
        b.close()


def test_a_cell_written_in_sql_is_not_taken(url: str, tmp_path: Path) -> None:
    a, b = SensorDatabase(tmp_path / "a", url), SensorDatabase(tmp_path / "b", url)
    try:
        CellStore(a).put("termux", "minimal", (37.0, -122.0))
        assert CellStore(b).get("termux", "minimal") == (37.0, -122.0)  # the other replica's: taken
        sql(url, "UPDATE sensor_cells SET latitude = 38.0 WHERE source = 'termux' AND scope = 'minimal'")
        assert CellStore(b).get("termux", "minimal") is None
        sql(url, "INSERT INTO sensor_cells (source, scope, latitude, longitude) "
                 "VALUES ('adb:x', 'standard', 37.79, -122.41)")
        assert CellStore(b).get("adb:x", "standard") is None
        other = SensorDatabase(tmp_path / "o", url, key=b"z" * 32)  # a replica with another (or no) key
        try:
            CellStore(a).put("termux", "minimal", (37.0, -122.0))
            assert CellStore(other).get("termux", "minimal") is None
        finally:
            other.close()
    finally:
        a.close()
        b.close()
