"""An ended gateway's database found damaged at a later start (no WAL above it: nothing to settle) is kept as
it is and said in the starting gateway's problems (its health), naming the file, never passed over in
silence (red-team pass on the durable record)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.storage.instances import settle_dead


async def _ended_log(tmp_path: Path) -> Path:
    directory = tmp_path / "instances" / "20260101T000000-1-abcdef"
    directory.mkdir(parents=True)
    (directory / "lock").write_bytes(b"")
    log = await AuditLog(directory / "sentinel.db").open()
    for i in range(40):
        await log.write(AuditEntry(session="s", tool=f"t{i}", decision="allow", outcome="ok",
                                   arguments={"pad": "x" * 400}))
    await log.close()
    return directory / "sentinel.db"


@pytest.mark.parametrize("damage", ["cut in half", "overwritten", "no bytes", "header only"])
async def test_a_damaged_ended_file_is_kept_and_said(tmp_path: Path, damage: str) -> None:
    db = await _ended_log(tmp_path)
    raw = db.read_bytes()
    damaged = {"cut in half": raw[: len(raw) // 2], "overwritten": b"x" * len(raw), "no bytes": b"",
               "header only": raw[:100]}[damage]
    db.write_bytes(damaged)
    problems: list[str] = []
    assert settle_dead(tmp_path, problems) == [db.parent]
    assert len(problems) == 1 and str(db) in problems[0], problems
    assert db.read_bytes() == damaged  # left as it was, for audit verify


async def test_an_intact_ended_file_is_kept_without_a_problem(tmp_path: Path) -> None:
    db = await _ended_log(tmp_path)
    problems: list[str] = []
    assert settle_dead(tmp_path, problems) == [db.parent] and problems == []


def test_an_intact_table_without_rowid_is_not_called_damaged(tmp_path: Path) -> None:
    import sqlite3

    from sentinel_mcp.storage.instances import damaged

    db = tmp_path / "journal.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
        conn.executemany("INSERT INTO t VALUES (?, ?)", [(f"k{i}", "v" * 500) for i in range(200)])
    conn.close()
    assert damaged(db) is None
    db.write_bytes(db.read_bytes()[: 3 * 4096])
    assert damaged(db) is not None and "cut short" in str(damaged(db))
