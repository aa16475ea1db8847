"""A SQLite audit log's ``id`` is the rowid without AUTOINCREMENT (issue 21, ``audit_schema.py``): a commit no
longer writes the ``sqlite_sequence`` page, and the record is what it was: every row whose write returned is
there after ``kill -9``, ids follow the chain one by one, and a log made with AUTOINCREMENT goes on."""

from __future__ import annotations

import asyncio
import collections
import os
import signal
import sqlite3
import struct
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from sentinel_mcp.gateway import audit_schema
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_chain import verify_file

ROOT = Path(__file__).resolve().parents[2]


def entry(i: int) -> AuditEntry:
    return AuditEntry(session=f"s{i % 4}", tool="t", decision="allow", outcome="ok", arguments={"i": i})


def chained_in_id_order(path: Path, rows: int) -> None:
    """Intact, the head counting every row, and the ids 1..rows, each row chained onto the one before."""
    report = verify_file(path)
    assert report.problem is None and report.broken_row is None and report.rows == rows, report
    with closing(sqlite3.connect(path)) as c:
        assert c.execute("SELECT rows FROM audit_head").fetchall() == [(rows,)]
        got = c.execute("SELECT id, prev_hash, hash FROM audit ORDER BY id").fetchall()
    assert [r[0] for r in got] == list(range(1, rows + 1))
    assert all(got[i][1] == got[i - 1][2] for i in range(1, len(got)))


def frames_per_commit(wal: Path) -> list[int]:
    """The frames (pages) of each commit in a write-ahead log of this generation (its salt), in order."""
    data = wal.read_bytes()
    page = struct.unpack(">I", data[8:12])[0]
    salt, off, pending, out = data[16:24], 32, 0, []
    while off + 24 + page <= len(data):
        number, size = struct.unpack(">II", data[off:off + 8])
        if number == 0 or data[off + 8:off + 16] != salt:
            break
        pending += 1
        if size:  # the commit's last frame
            out.append(pending)
            pending = 0
        off += 24 + page
    return out


async def test_a_new_log_has_no_sequence_table_and_a_row_alone_writes_fewer_pages(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    try:
        for i in range(60):
            await log.write(entry(i), alone=True)
        for suffix in ("", "-wal"):
            # a copy: the live file is held exclusively
            Path(f"{tmp_path / 'copy.db'}{suffix}").write_bytes(Path(f"{store}{suffix}").read_bytes())
        # each commit of a row alone: the table's page, the index's (now and then one more when it splits),
        # the head's, now and then the header page (the file grew); with sqlite_sequence it was one more
        frames = frames_per_commit(Path(f"{tmp_path / 'copy.db'}-wal"))
        assert len(frames) >= 60, frames
        assert sum(frames[-60:]) / 60 < 4.0, collections.Counter(frames)
    finally:
        await log.close()
    with closing(sqlite3.connect(store)) as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
        sql = c.execute("SELECT sql FROM sqlite_master WHERE name = 'audit'").fetchone()[0]
    assert "sqlite_sequence" not in names and "AUTOINCREMENT" not in sql.upper()
    chained_in_id_order(store, 60)


_WRITE_UNTIL_KILLED = """
import asyncio, sys
from pathlib import Path
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
async def one(log, i, alone):
    e = AuditEntry(session=f"s{i % 4}", tool="t", decision="allow", outcome="ok", arguments={"i": i})
    print(await log.write(e, alone=alone), flush=True)
async def main():
    log = await AuditLog(Path(sys.argv[1])).open()
    for i in range(0, 1_000_000, 5):
        await one(log, i, True)  # a row alone, committed on this thread (write_inline)
        await asyncio.gather(*(one(log, i + k, False) for k in range(1, 5)))  # a batch on the writer
asyncio.run(main())
"""


@pytest.mark.parametrize("after", [1, 37, 400])
def test_kill_9_right_after_a_write_returns_keeps_every_returned_row_in_id_order(tmp_path: Path,
                                                                                 after: int) -> None:
    store = tmp_path / "sentinel.db"
    p = subprocess.Popen([sys.executable, "-c", _WRITE_UNTIL_KILLED, str(store)], stdout=subprocess.PIPE,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stdout is not None
    returned = []
    for line in p.stdout:
        returned.append(line.strip())
        if len(returned) >= after:
            os.kill(p.pid, signal.SIGKILL)  # the moment the write returned: its commit is all there is
            break
    returned += [line.strip() for line in p.stdout]
    p.wait(timeout=30)
    with closing(sqlite3.connect(store)) as c:
        stored = [r[0] for r in c.execute("SELECT decision_id FROM audit ORDER BY id")]
    assert len(returned) >= after and [d for d in returned if d not in set(stored)] == []
    chained_in_id_order(store, len(stored))


_OLD_TABLES = audit_schema._TABLES.replace("id INTEGER PRIMARY KEY,", "id INTEGER PRIMARY KEY AUTOINCREMENT,")


async def test_a_log_made_with_autoincrement_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _OLD_TABLES != audit_schema._TABLES
    store = tmp_path / "sentinel.db"
    monkeypatch.setattr(audit_schema, "_TABLES", _OLD_TABLES)  # as an older Sentinel made the file
    log = await AuditLog(store).open()
    await asyncio.gather(*(log.write(entry(i)) for i in range(10)))
    await log.close()
    monkeypatch.undo()
    log = await AuditLog(store).open()
    try:
        await log.write(entry(10), alone=True)
        await asyncio.gather(*(log.write(entry(i)) for i in range(11, 30)))
    finally:
        await log.close()
    chained_in_id_order(store, 30)
    with closing(sqlite3.connect(store)) as c:
        assert c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'audit'").fetchone() == (30,)
