"""The consent books and the sensors' records behind the storage seam, on both backends (SQLite file, real
PostgreSQL): grant, honour, revoke, log, retention sweeps, audit rows; a row for another principal is never
honoured (many spellings); malformed rows are refused; replicas on one PostgreSQL share one book (a grant made
by another process is honoured at once, a revoke refused at once)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from device_tools.sensors import reading_rows
from device_tools.sensors.audit_log import AuditLog as SensorAudit
from device_tools.sensors.consent_registry import COLUMNS as SENSOR_CONSENT_COLS
from device_tools.sensors.consent_registry import PURPOSE as SENSOR_CONSENT, ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from sentinel_mcp.core.sensor_messages import SensorResponse
from device_tools.sensors.reading_vault import ReadingVault
from sentinel_mcp.gateway.consents import ANY_PURPOSE, ConsentBook
from sentinel_mcp.gateway.replica import SharedStore
from sentinel_mcp.storage.row_signature import sign_row

SEAL_KEY = "consent-test seal key, the same on every replica"  # the rows replicas share are signed with it
SENSOR_KEY = SharedStore("", "", "", SEAL_KEY.encode()).key("sensor consent") or b""

# another principal's name, spelled every way that must not reach alice's consent
NOT_ALICE = ["Alice", "ALICE", "alice ", " alice", "alice\n", "alice\x00", "al%", "%", "_lice", "*", "",
             "alice'--", "alice' OR '1'='1", "\u0430lice", "alice\u200b", "bob"]


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def book(store_location: str) -> Iterator[ConsentBook]:
    b = ConsentBook(store_location)
    yield b
    b.close()


@pytest.fixture
def sensors(store_location: str, tmp_path: Path) -> Iterator[SensorDatabase]:
    db = SensorDatabase(tmp_path / "sensors", store_location)  # a SQLite path is ignored: the data dir's file
    yield db
    db.close()


def test_personal_consents_on_both_backends(book: ConsentBook) -> None:
    book.grant("alice", "messages", "support", by="elicitation")
    book.grant("alice", "contacts", expires_in=60)
    assert book.current("alice", "messages", "support").granted_by == "elicitation"  # type: ignore[union-attr]
    assert book.current("alice", "messages", "marketing") is None  # another purpose
    assert book.current("alice", "contacts", "anything").purpose == ANY_PURPOSE  # type: ignore[union-attr]
    book.grant("alice", "contacts", expires_in=60)  # again: updated, not doubled
    assert [(c.kind, c.purpose) for c in book.list("alice")] == [("contacts", "*"), ("messages", "support")]
    assert book.revoke("alice", "messages") == 1
    assert book.current("alice", "messages", "support") is None
    assert book.revoke("alice") == 1 and book.list() == []
    assert [(e["action"], e["kind"]) for e in book.log("alice")] == [
        ("grant", "messages"), ("grant", "contacts"), ("grant", "contacts"), ("revoke", "messages"),
        ("revoke", "contacts")]
    with pytest.raises(ValueError):
        book.grant("alice", "messages", expires_in=0)


@pytest.mark.parametrize("who", NOT_ALICE)
def test_a_consent_for_another_principal_is_not_honoured(book: ConsentBook, sensors: SensorDatabase,
                                                         who: str) -> None:
    book.grant("alice", "messages")
    registry = ConsentRegistry(sensors)
    registry.grant("alice", SensorKind.location, Scope.detailed)
    assert book.current(who, "messages", "support") is None
    assert book.list(who) == []
    if who != "*":  # "*" is the sensors' own every-requester grant, which only the owner writes
        assert registry.current(who, SensorKind.location) is None
    assert book.revoke(who) == 0 and book.current("alice", "messages", "x") is not None  # nor revoked by them


def _malformed_consent_rows(shared: bool) -> list[tuple[Any, ...]]:
    now = time.time()
    rows: list[tuple[Any, ...]] = [
        ("mallory", "messages", "*", now, now - 10, "cli"),  # expires before it was granted
        ("", "messages", "*", now, None, "cli"),  # no principal
        ("mallory", "", "*", now, None, "cli"),  # no kind
    ]
    if not shared:  # SQLite keeps what a column's type cannot hold; PostgreSQL refuses it at the door
        rows += [
            ("mallory", "messages", "*", "yesterday", None, "cli"),
            ("mallory", "messages", "*", now, "never", "cli"),
            (b"mallory", "messages", "*", now, None, "cli"),
            ("mallory", "messages", "*", b"\x00", None, "cli"),
        ]
    return rows


def test_malformed_consent_rows_are_refused(book: ConsentBook) -> None:
    shared = not isinstance(book.path, Path)
    for row in _malformed_consent_rows(shared):
        book._db.write_blocking("DELETE FROM consents")
        book._db.write_blocking("INSERT INTO consents VALUES (?,?,?,?,?,?)", row)
        assert book.current(row[0], row[1], "support") is None, row
        assert book.list() == [], row
    if shared:
        from sentinel_mcp.storage.database import StatementError

        with pytest.raises(Exception) as info:  # the schema's types refuse text for a time
            book._db.write_blocking(
                "INSERT INTO consents VALUES (?,?,?,?,?,?)",
                ("mallory", "messages", "x", "yesterday", None, "cli"),
            )
        # the row, not the store: the statement's own refusal (a StatementError), the store healthy
        assert isinstance(info.value, StatementError) and book._db.health.ok


def _age(sensors: SensorDatabase, table: str, start: str, seconds: float) -> None:
    """Time passes for the stored rows: their times move back (on a server store they are on the database's
    clock, which no replica's injected clock moves)."""
    sensors.execute(
        f"UPDATE {table} SET {start} = {start} - ?, expires_at = expires_at - ?", (seconds, seconds)
    )
    if table == "sensor_consents" and sensors.shared:  # as a replica signed them then: only the clock decides
        for row in sensors.query("SELECT * FROM sensor_consents"):
            values = tuple(row[c] for c in SENSOR_CONSENT_COLS)
            sensors.execute("UPDATE sensor_consents SET mac = ? WHERE requester = ? AND sensor = ?",
                            (sign_row(sensors.row_key, SENSOR_CONSENT, values), *values[:2]))
    if table == "sensor_readings" and sensors.shared:  # the same for kept readings (reading_rows.py)
        for row in sensors.query("SELECT * FROM sensor_readings"):
            values = tuple(row[c] for c in reading_rows.COLUMNS)
            sensors.execute("UPDATE sensor_readings SET mac = ? WHERE id = ?",
                            (reading_rows.mac(sensors.row_key, values), row["id"]))


def test_sensor_consents_retention_and_audit_on_both_backends(sensors: SensorDatabase) -> None:
    clock = Clock()
    registry = ConsentRegistry(sensors, clock)
    registry.grant("agent-a", SensorKind.location, Scope.standard, expires_in=30)
    registry.grant(ANY := "*", SensorKind.battery, Scope.minimal)
    assert registry.current("agent-a", SensorKind.location).scope is Scope.standard  # type: ignore[union-attr]
    assert registry.current("agent-z", SensorKind.battery).requester == ANY  # type: ignore[union-attr]
    _age(sensors, "sensor_consents", "granted_at", 31)
    assert registry.current("agent-a", SensorKind.location) is None  # expired
    assert [c.sensor for c in registry.list(include_expired=True)] == [
        SensorKind.battery,
        SensorKind.location,
    ]
    assert registry.revoke("*") == 1 and registry.current("agent-z", SensorKind.battery) is None

    vault = ReadingVault(sensors, clock)
    response = SensorResponse(task_id="t1", payload={"level": 50}, timestamp="2026-11-24T09:00:00Z")
    ids = [vault.store("agent-a", "battery", "minimal", response, retention) for retention in (10, 100)]
    assert all(isinstance(i, int) and i > 0 for i in ids) and ids[0] != ids[1]  # type: ignore[operator]
    assert vault.store("agent-a", "battery", "minimal", response, 0) is None  # not kept at all
    assert [r["id"] for r in vault.retained("agent-a")] == ids and vault.retained("agent-b") == []
    _age(sensors, "sensor_readings", "stored_at", 11)
    assert [r["id"] for r in vault.retained("agent-a")] == ids[1:]  # never returned once expired
    assert vault.count_all() == 2 and vault.sweep() == 1 and vault.count_all() == 1
    assert vault.sweep() == 0  # a second sweep (another replica's) finds nothing: harmless

    audit = SensorAudit(sensors, clock)
    first = audit.record(
        requester="agent-a",
        sensor="battery",
        scope="minimal",
        policy_tag="p",
        task_id="t1",
        decision="allowed",
        reason="ok",
        redactions=["serial"],
        retention=100,
        decision_id="d-1",
    )
    second = audit.record(
        requester="agent-b",
        sensor="location",
        scope="standard",
        policy_tag="p",
        task_id="t2",
        decision="denied",
        reason="no consent",
        redactions=[],
        retention=0,
    )
    assert second > first > 0
    assert [(r["decision"], r["decision_id"], r["redactions"]) for r in audit.rows()] == [
        ("allowed", "d-1", ["serial"]),
        ("denied", "", []),
    ]
    assert [r["requester"] for r in audit.rows("agent-b")] == ["agent-b"]


def test_malformed_sensor_consent_rows_are_refused(sensors: SensorDatabase) -> None:
    registry = ConsentRegistry(sensors)
    now = time.time()
    rows: list[tuple[Any, ...]] = [
        ("agent-m", "location2", "standard", now, None, "cli"),  # no such sensor
        ("agent-m", "location", "everything", now, None, "cli"),  # no such scope
        ("agent-m", "location", "Detailed", now, None, "cli"),  # a scope's spelling is exact
        ("agent-m", "location", "detailed", now, now - 1, "cli"),  # expires before granted
        ("agent-m", "location", "detailed", now, None, ""),  # nobody granted it
    ]
    if not sensors.shared:
        rows += [
            ("agent-m", "location", "detailed", "now", None, "cli"),
            ("agent-m", "location", "detailed", now, "later", "cli"),
        ]
    for row in rows:
        sensors.execute("DELETE FROM sensor_consents")
        sensors.execute("INSERT INTO sensor_consents (requester, sensor, scope, granted_at, expires_at, "
                        "granted_by) VALUES (?,?,?,?,?,?)", row)
        assert registry.current("agent-m", SensorKind.location) is None, row
        assert registry.list(include_expired=True) == [], row


def _other_process(script: str, *args: str) -> str:
    """Run ``script`` in a separate Python process (another replica's connection to the same database)."""
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_replicas_on_one_postgresql_share_consents(pg_url: str, tmp_path: Path) -> None:
    """What replica A grants (here: the real CLI, another process) replica B honours on its next check; what A
    revokes B refuses at once. Nothing is cached on B."""
    config = tmp_path / "replica-a.json"
    config.write_text(json.dumps({"sentinel": {"store": pg_url, "data_dir": str(tmp_path / "a"),
                                               "cluster": {"seal_key": SEAL_KEY}}}))
    book = ConsentBook(pg_url, key=SharedStore(pg_url, "", "", SEAL_KEY.encode()).key("consent"))  # replica B
    sensor_db = SensorDatabase(tmp_path / "b" / "sensors", pg_url, key=SENSOR_KEY)
    registry = ConsentRegistry(sensor_db)
    try:
        assert book.current("alice", "messages", "support") is None
        cli = [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "consent"]
        granted = subprocess.run(
            [*cli, "grant", "alice", "messages"], capture_output=True, text=True, timeout=120
        )
        assert granted.returncode == 0, granted.stderr[-2000:]
        assert book.current("alice", "messages", "support") is not None  # honoured on B at once
        assert book.current("bob", "messages", "support") is None
        revoked = subprocess.run([*cli, "revoke", "alice"], capture_output=True, text=True, timeout=120)
        assert revoked.returncode == 0, revoked.stderr[-2000:]
        assert book.current("alice", "messages", "support") is None  # refused on B at once
        assert [e["action"] for e in book.log("alice")] == ["grant", "revoke"]

        sensor_script = (
            "import sys; from pathlib import Path; "
            "from device_tools.sensors.database import SensorDatabase; "
            "from device_tools.sensors.consent_registry import ConsentRegistry; "
            "from sentinel_mcp.core.sensor_kinds import SensorKind, Scope; "
            "db = SensorDatabase(Path(sys.argv[2]), sys.argv[1], key=bytes.fromhex(sys.argv[4])); "
            "r = ConsentRegistry(db); "
            "r.grant('agent-a', SensorKind.location, Scope.standard) if sys.argv[3] == 'grant' "
            "else r.revoke('agent-a'); db.close()"
        )
        _other_process(sensor_script, pg_url, str(tmp_path / "a" / "sensors"), "grant", SENSOR_KEY.hex())
        assert registry.current("agent-a", SensorKind.location).scope is Scope.standard  # type: ignore[union-attr]
        _other_process(sensor_script, pg_url, str(tmp_path / "a" / "sensors"), "revoke", SENSOR_KEY.hex())
        assert registry.current("agent-a", SensorKind.location) is None
    finally:
        book.close()
        sensor_db.close()


async def test_the_sensors_builtin_keeps_its_records_in_the_shared_database(
    pg_url: str, tmp_path: Path
) -> None:
    """The built-in as the gateway mounts it (``BuiltinContext.store`` = ``sentinel.store``): a consent
    another
    process granted lets a read through, its audit row and retained reading are in PostgreSQL, not the data
    dir;
    the other process's revoke refuses the next read."""
    from mcp import Client

    from device_tools.sensors.server import create_server
    from sentinel_mcp.core.builtin import BuiltinContext
    from sentinel_mcp.core.call_meta import DECISION_KEY, PRINCIPAL_KEY

    read = {"sensor": "location", "scope": "standard", "policy_tag": "location-for-search", "retention": 60}
    script = (
        "import sys; from pathlib import Path; from device_tools.sensors.database import SensorDatabase; "
        "from device_tools.sensors.consent_registry import ConsentRegistry; "
        "from sentinel_mcp.core.sensor_kinds import SensorKind, Scope; "
        "db = SensorDatabase(Path(sys.argv[2]), sys.argv[1], key=bytes.fromhex(sys.argv[4])); "
        "r = ConsentRegistry(db); "
        "r.grant('agent-a', SensorKind.location, Scope.standard) if sys.argv[3] == 'grant' "
        "else r.revoke('agent-a'); db.close()"
    )
    _other_process(script, pg_url, str(tmp_path / "a" / "sensors"), "grant", SENSOR_KEY.hex())
    server = create_server(
        BuiltinContext(
            name="sensors",
            data_dir=tmp_path / "b" / "sensors",
            settings={"consent_by_elicitation": False},
            store=pg_url,
            services={"sensor_consent_key": SENSOR_KEY},  # the cluster's, as the gateway gives it
        )
    )
    async with Client(server) as c:
        allowed = await c.call_tool("sensor_read", read, meta={PRINCIPAL_KEY: "agent-a", DECISION_KEY: "d-1"})
        assert not allowed.is_error, allowed
        other = await c.call_tool("sensor_read", read, meta={PRINCIPAL_KEY: "agent-b", DECISION_KEY: "d-2"})
        _other_process(script, pg_url, str(tmp_path / "a" / "sensors"), "revoke", SENSOR_KEY.hex())
        revoked = await c.call_tool("sensor_read", read, meta={PRINCIPAL_KEY: "agent-a", DECISION_KEY: "d-3"})
    assert other.is_error and revoked.is_error
    assert not (tmp_path / "b" / "sensors" / "sensors.db").exists()  # nothing per replica
    db = SensorDatabase(tmp_path / "c", pg_url, key=SENSOR_KEY)  # another replica of the cluster
    try:
        assert [(r["decision_id"], r["decision"]) for r in SensorAudit(db).rows()] == [
            ("d-1", "allowed"),
            ("d-2", "denied"),
            ("d-3", "denied"),
        ]
        assert [r["requester"] for r in ReadingVault(db).retained()] == ["agent-a"]
    finally:
        db.close()
