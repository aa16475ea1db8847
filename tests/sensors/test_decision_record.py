"""The sensors' audit rows are records of the one decision log: typed, redacted, pointing to the gateway's
decision, written before a reading is kept or returned; a row that cannot be written refuses the request."""

from __future__ import annotations

import sqlite3

import pytest
from mcp import Client

from device_tools.sensors.audit_log import AuditLog
from device_tools.sensors.database import DB_FILENAME, SCHEMA, SensorDatabase
from device_tools.sensors.errors import InvalidRequest, NotRecorded
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from device_tools.sensors.server import create_server
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.call_meta import DECISION_KEY, PRINCIPAL_KEY

pytestmark = pytest.mark.timeout(60)
READ = {"sensor": "location", "scope": "standard", "policy_tag": "location-for-search", "retention": 60}


def refuse_audit_rows(path) -> None:
    """A real SQLite refusal of every new audit row (what a full disk or a broken store does to the writer).
    """
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TRIGGER no_audit BEFORE INSERT ON sensor_audit BEGIN SELECT RAISE(ABORT, 'disk full'); "
            "END"
        )
    db.close()


@pytest.mark.parametrize("granted", [True, False])
async def test_a_row_that_cannot_be_written_refuses_and_keeps_nothing(tmp_path, make_bridge, granted):
    bridge = make_bridge()
    if granted:
        bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed, None, granted_by="cli")
    refuse_audit_rows(tmp_path / "sensors" / DB_FILENAME)
    with pytest.raises(NotRecorded, match="could not be recorded"):
        await bridge.handle(dict(READ), "agent-a", decision_id="d-1")
    with sqlite3.connect(tmp_path / "sensors" / DB_FILENAME) as db:
        assert db.execute("SELECT count(*) FROM sensor_readings").fetchone() == (0,)  # nothing kept
        assert db.execute("SELECT count(*) FROM sensor_audit").fetchone() == (0,)
    db.close()


async def test_rows_are_typed_and_point_to_the_decision(tmp_path, make_bridge):
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed, None, granted_by="cli")
    await bridge.handle(dict(READ, task_id="card 4111 1111 1111 1111"), "agent-a", decision_id="d-42")
    with pytest.raises(InvalidRequest):
        await bridge.handle(dict(READ, scope="everything"), "agent-a", decision_id="d-43")
    rows = AuditLog(bridge.audit._db).rows()
    assert [(r["decision"], r["decision_id"]) for r in rows] == [("allowed", "d-42"), ("invalid", "d-43")]
    assert "4111 1111 1111 1111" not in str(rows)  # the one redaction path, as for the gateway's rows
    with pytest.raises(NotRecorded):  # an outcome outside the vocabulary is not written
        bridge.audit.record(
            requester="a",
            sensor="location",
            scope="minimal",
            policy_tag="",
            task_id="",
            decision="allowed-ish",
            reason="",
            redactions=[],
            retention=0,
        )


async def test_standalone_a_clients_decision_id_is_kept_as_given_but_bounded(tmp_path):
    """Standalone (no gateway) the caller's _meta is all there is; an oversized or non-string id is dropped.
    """
    server = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors", settings={}))
    async with Client(server) as c:
        for forged in ("x" * 5000, 7, ["d"], {"a": 1}):
            await c.call_tool("sensor_read", READ, meta={PRINCIPAL_KEY: "agent-a", DECISION_KEY: forged})
    db = SensorDatabase(tmp_path / "sensors")
    try:
        assert [r["decision_id"] for r in AuditLog(db).rows()] == [""] * 4
    finally:
        db.close()


def test_a_store_from_before_the_link_is_migrated_and_keeps_its_rows(tmp_path):
    folder = tmp_path / "sensors"
    folder.mkdir()
    db = SensorDatabase(folder)  # today's schema, then rolled back to version 1 by hand: an old store
    db.close()
    with sqlite3.connect(folder / DB_FILENAME) as old:
        for table in ("sensor_audit", "sensor_consents", "sensor_readings"):
            old.execute(f"DROP TABLE {table}")
        old.executescript(SCHEMA)
        old.execute("UPDATE storage_schema SET version = 1 WHERE store = 'sensors'")
        old.execute(
            "INSERT INTO audit(at, requester, sensor, scope, policy_tag, task_id, decision, reason, "
            "redactions, retention) VALUES (1, 'a', 'location', 'minimal', '', '', 'denied', 'r', '[]', 0)"
        )
    old.close()
    db = SensorDatabase(folder)
    try:
        [row] = AuditLog(db).rows()  # both steps: the link to the gateway, then the shared names
        assert row["decision"] == "denied" and row["decision_id"] == ""
    finally:
        db.close()
