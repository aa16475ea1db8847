"""Retained sensor readings on a server store (``sensor_readings``) are signed by the replica that kept them
(``device_tools/sensors/reading_rows.py``) over whose they are, what they say and until when, and checked on
every read. A reading is a person's location, photo or scan, handed back to the requester that read it
(``sensor_retained``). Before, anyone who could write the database without the seal key could hand agent-b's
readings to agent-a in SQL, keep them past their retention, or plant a reading an agent then acts on."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.reading_vault import ReadingVault
from sentinel_mcp.core.sensor_messages import SensorResponse

KEY = b"r" * 32
WHERE = SensorResponse(task_id="t1", payload={"lat": 48.1, "lon": 11.5}, timestamp="2026-12-05T06:00:00Z")


def sql(url: str, text: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(text)


def _vault(url: str, root: Path, key: bytes = KEY) -> tuple[SensorDatabase, ReadingVault]:
    db = SensorDatabase(root, url, key=key)
    return db, ReadingVault(db)


def test_a_kept_reading_is_read_back_by_another_replica_for_its_requester_only(pg_url: str,
                                                                              tmp_path: Path) -> None:
    db, vault = _vault(pg_url, tmp_path / "a")
    vault.store("agent-b", "location", "precise", WHERE, 3600)
    db.close()
    db, vault = _vault(pg_url, tmp_path / "b")
    try:
        assert [r["response"]["payload"] for r in vault.retained("agent-b")] == [WHERE.payload]
        assert vault.retained("agent-a") == []
    finally:
        db.close()
    db, vault = _vault(pg_url, tmp_path / "c", key=b"x" * 32)  # another key: nothing
    try:
        assert vault.retained("agent-b") == []
    finally:
        db.close()


ATTACKS = {
    "handed to agent-a": "UPDATE sensor_readings SET requester = 'agent-a'",
    "copied to agent-a": (
        "INSERT INTO sensor_readings (requester, task_id, sensor, scope, response, stored_at, expires_at, "
        "mac) SELECT 'agent-a', task_id, sensor, scope, response, stored_at, expires_at, mac "
        "FROM sensor_readings"),
    "kept past its retention": "UPDATE sensor_readings SET expires_at = expires_at + 86400 * 365",
    "moved in time whole": "UPDATE sensor_readings SET stored_at = stored_at + 86400, "
                           "expires_at = expires_at + 86400",
    "planted": (
        "INSERT INTO sensor_readings (requester, task_id, sensor, scope, response, stored_at, expires_at) "
        "SELECT 'agent-a', task_id, sensor, scope, replace(response, '48.1', '10.0'), stored_at, expires_at "
        "FROM sensor_readings"),
    "edited": "UPDATE sensor_readings SET response = replace(response, '48.1', '10.0')",
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_reading_changed_in_sql_is_nobodys(pg_url: str, tmp_path: Path, attack: str) -> None:
    db, vault = _vault(pg_url, tmp_path / "a")
    vault.store("agent-b", "location", "precise", WHERE, 3600)
    db.close()
    sql(pg_url, ATTACKS[attack])
    db, vault = _vault(pg_url, tmp_path / "b")
    try:
        assert vault.retained("agent-a") == []
        assert all(r["response"]["payload"] == WHERE.payload for r in vault.retained())
        if attack in ("kept past its retention", "moved in time whole", "edited", "handed to agent-a"):
            assert vault.retained("agent-b") == []
        else:
            assert len(vault.retained("agent-b")) == 1
    finally:
        db.close()
