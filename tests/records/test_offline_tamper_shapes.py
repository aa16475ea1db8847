"""Offline edits to a closed audit log that keep every text alike but change its shape: rows reordered by id,
a value's storage type changed, a blob in a hashed column, a head whose count is text. Each is named, none
crashes the check (red-team pass on the durable record)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_chain import ChainReport, verify_file


@pytest.fixture
async def store(tmp_path: Path) -> Path:
    path = tmp_path / "sentinel.db"
    log = await AuditLog(path).open()
    for i in range(8):
        await log.write(AuditEntry(session="s", tool=f"t{i}", decision="allow", outcome="ok",
                                   arguments={"i": i}, latency_ms=float(i) + 0.5))
    await log.close()
    assert verify_file(path).ok
    return path


def tamper(store: Path, *sql: str) -> ChainReport:
    conn = sqlite3.connect(store)
    conn.execute("DROP TRIGGER IF EXISTS audit_advance")  # one who can write the file can drop it
    for one in sql:
        conn.execute(one)
    conn.commit()
    conn.close()
    return verify_file(store)


def test_rows_reordered_by_their_ids_are_named(store: Path) -> None:
    report = tamper(store, "UPDATE audit SET id = 100 WHERE id = 4", "UPDATE audit SET id = 4 WHERE id = 6",
                    "UPDATE audit SET id = 6 WHERE id = 100")
    assert not report.ok and report.broken_row == 4


@pytest.mark.parametrize("column", ["ts", "latency_ms", "session", "tool", "arguments"])
def test_a_value_whose_storage_type_changed_is_named(store: Path, column: str) -> None:
    # a blob of the same bytes (column affinity turns a text back into the number, so a blob is the change
    # that sticks)
    report = tamper(store, f"UPDATE audit SET {column} = CAST(CAST({column} AS TEXT) AS BLOB) WHERE id = 3")
    assert not report.ok and report.problem
    assert report.broken_row in (3, None)  # the row, or the file named unreadable


@pytest.mark.parametrize("value", ["X'38'", "'eight'", "7.5"])
def test_a_head_count_of_another_type_is_named(store: Path, value: str) -> None:
    report = tamper(store, f"UPDATE audit_head SET rows = {value}")
    assert not report.ok and report.problem


def test_a_hash_spelled_in_capitals_is_named(store: Path) -> None:
    report = tamper(store, "UPDATE audit SET hash = upper(hash) WHERE id = 8",
                    "UPDATE audit_head SET hash = upper(hash)")
    assert not report.ok and report.broken_row == 8
