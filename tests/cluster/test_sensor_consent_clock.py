"""The sensors' consents and retained readings in the store replicas share live on the database's clock (real
PostgreSQL), as the gateway's consents do (``test_consent_clock.py``): a replica whose clock runs ahead cannot
stretch a sensor consent or a reading's retention, and one whose clock lags cannot use (revive) a consent or
return a reading that expired everywhere else. A replica is a ``ConsentRegistry``/``ReadingVault`` given a
skewed clock (what the bridge passes them)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterator

import psycopg
import pytest

from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.reading_vault import ReadingVault
from device_tools.sensors.consent_registry import COLUMNS as SENSOR_CONSENT_COLS
from device_tools.sensors.consent_registry import PURPOSE as SENSOR_CONSENT
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign_row
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from sentinel_mcp.core.sensor_messages import SensorResponse

HOUR = 3600.0
SKEWS = [HOUR, 30 * 24 * HOUR]
RESPONSE = SensorResponse(task_id="t1", payload={"level": 50}, timestamp="2026-11-24T09:00:00Z")


def db_now(url: str) -> float:
    with psycopg.connect(url) as conn:
        return float(conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()[0])  # type: ignore[index]


def stored(url: str, table: str, start: str) -> list[tuple[float, float | None]]:
    with psycopg.connect(url) as conn:
        return [(r[0], r[1]) for r in conn.execute(f"SELECT {start}, expires_at FROM {table} ORDER BY 1")]


def age(url: str, table: str, start: str, seconds: float) -> None:
    """Move every row's times back: it expired ``seconds`` ago by the cluster's clock, not by anyone's own."""
    with psycopg.connect(url) as conn:
        conn.execute(
            f"UPDATE {table} SET {start} = {start} - %s, expires_at = expires_at - %s", (seconds, seconds)
        )
        if table == "sensor_consents":  # signed again as this process's replicas sign: only the clock decides
            cols = ", ".join(SENSOR_CONSENT_COLS)
            for row in conn.execute(f"SELECT {cols} FROM sensor_consents").fetchall():
                conn.execute("UPDATE sensor_consents SET mac = %s WHERE requester = %s AND sensor = %s",
                             (sign_row(PROCESS_KEY, SENSOR_CONSENT, row), *row[:2]))


def off_by(seconds: float) -> Callable[[], float]:
    return lambda: time.time() + seconds


@pytest.fixture
def db(pg_url: str, tmp_path: Path) -> Iterator[SensorDatabase]:
    d = SensorDatabase(tmp_path / "sensors", pg_url)
    yield d
    d.close()


@pytest.mark.parametrize("ahead", SKEWS)
def test_a_replica_whose_clock_runs_ahead_cannot_stretch_a_sensor_consent(
    pg_url: str, db: SensorDatabase, ahead: float
) -> None:
    c = ConsentRegistry(db, off_by(ahead)).grant(
        "agent-a", SensorKind.location, Scope.standard, expires_in=60
    )
    [(granted, expires)] = stored(pg_url, "sensor_consents", "granted_at")
    assert expires is not None and 0 < expires - db_now(pg_url) <= 60 and granted <= db_now(pg_url)
    assert c.expires_at == expires and c.granted_at == granted  # what it says is what is stored
    on_time = ConsentRegistry(db)
    assert on_time.current("agent-a", SensorKind.location) is not None
    assert [x.requester for x in on_time.list("agent-a")] == ["agent-a"]
    # and the replica running ahead judges on the same clock: what lives for everyone lives for it
    assert ConsentRegistry(db, off_by(ahead)).current("agent-a", SensorKind.location) is not None


@pytest.mark.parametrize("behind", SKEWS)
def test_a_replica_whose_clock_lags_cannot_revive_an_expired_sensor_consent(
    pg_url: str, db: SensorDatabase, behind: float
) -> None:
    ConsentRegistry(db).grant("agent-a", SensorKind.location, Scope.detailed, expires_in=60)
    ConsentRegistry(db).grant("*", SensorKind.battery, Scope.minimal, expires_in=60)  # every requester's too
    age(pg_url, "sensor_consents", "granted_at", 660)  # expired ten minutes ago by the cluster's clock
    lagging = ConsentRegistry(db, off_by(-behind))
    assert lagging.current("agent-a", SensorKind.location) is None
    assert lagging.current("agent-z", SensorKind.battery) is None
    assert lagging.list("agent-a") == [] and lagging.list() == []
    assert len(lagging.list(include_expired=True)) == 2  # still stored, just not live
    # granted through the lagging replica: a full minute on the cluster's clock, not none
    lagging.grant("agent-b", SensorKind.location, Scope.minimal, expires_in=60)
    assert ConsentRegistry(db).current("agent-b", SensorKind.location) is not None


def test_a_sensor_consent_until_revoked_stays_until_revoked_on_the_database_clock(
    pg_url: str, db: SensorDatabase
) -> None:
    c = ConsentRegistry(db, off_by(HOUR)).grant("agent-a", SensorKind.location, Scope.minimal)
    assert c.expires_at is None and stored(pg_url, "sensor_consents", "granted_at")[0][1] is None
    lagging = ConsentRegistry(db, off_by(-HOUR))
    assert lagging.current("agent-a", SensorKind.location) is not None
    assert lagging.revoke("agent-a", SensorKind.location) == 1
    assert lagging.current("agent-a", SensorKind.location) is None


@pytest.mark.parametrize("ahead", SKEWS)
def test_a_replica_whose_clock_runs_ahead_cannot_stretch_or_cut_retention(
    pg_url: str, db: SensorDatabase, ahead: float
) -> None:
    ReadingVault(db, off_by(ahead)).store("agent-a", "battery", "minimal", RESPONSE, 60)
    [(at, expires)] = stored(pg_url, "sensor_readings", "stored_at")
    assert expires is not None and 0 < expires - db_now(pg_url) <= 60 and abs(expires - at - 60) < 1e-3
    ReadingVault(db).store("agent-a", "battery", "minimal", RESPONSE, 60)  # stored on time
    ahead_vault = ReadingVault(db, off_by(ahead))  # sweeps as it opens: nothing has expired
    assert ahead_vault.sweep() == 0 and ahead_vault.count_all() == 2
    assert len(ahead_vault.retained("agent-a")) == 2


@pytest.mark.parametrize("behind", SKEWS)
def test_a_replica_whose_clock_lags_neither_returns_nor_keeps_an_expired_reading(
    pg_url: str, db: SensorDatabase, behind: float
) -> None:
    lagging = ReadingVault(db, off_by(-behind))  # opened (and swept) before anything expired
    vault = ReadingVault(db)
    vault.store("agent-a", "battery", "minimal", RESPONSE, 60)
    age(pg_url, "sensor_readings", "stored_at", 660)  # expired ten minutes ago by the cluster's clock
    vault.store("agent-a", "battery", "minimal", RESPONSE, 60)  # this one still lives
    # never returned between sweeps, and the lagging replica's sweep deletes it
    assert [r["expires_at"] > db_now(pg_url) for r in lagging.retained("agent-a")] == [True]
    assert lagging.sweep() == 1 and lagging.count_all() == 1 and lagging.sweep() == 0
    # stored through the lagging replica: a full minute of retention on the cluster's clock, not none
    lagging.store("agent-b", "battery", "minimal", RESPONSE, 60)
    assert [r["requester"] for r in ReadingVault(db).retained("agent-b")] == ["agent-b"]
