"""The write-ahead log checkpointed by a job on the writer's queue, never inside a commit of an audit row
(``storage/idle_checkpoint.py``, issue 21): calls alone commit on the event loop's thread, and SQLite's own
checkpoint ran in the commit that took the log past 1,000 pages (one call in ~140 held for it). The record
is what it was: every row durable when its write returned (a process killed after checkpoints), the chain
whole, the log bounded, and a reader copying the file still holds checkpoints off."""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, read_audit
from sentinel_mcp.gateway.audit_chain import verify_file
from sentinel_mcp.storage import inline_policy
from sentinel_mcp.storage.copy_hold import copy_hold
from sentinel_mcp.storage.idle_checkpoint import EVERY_COMMITS

ROOT = Path(__file__).resolve().parents[2]
ROWS = 700  # past SQLite's own checkpoint (1,000 log pages: ~280 commits of a row alone) twice


def entry(i: int) -> AuditEntry:
    return AuditEntry(session=f"s{i % 16}", tool="t", decision="allow", outcome="ok", arguments={"i": i},
                      reason="read-only tool", event="decision" if i % 2 == 0 else "outcome")


def file_state(path: Path) -> tuple[int, str]:
    data = path.read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def watch_inserts(log: AuditLog, store: Path) -> list[int]:
    """The audit INSERTs (by their number) during which the database file itself was written: a checkpoint
    inside that row's commit (with the log on, a commit writes only the log)."""
    changed: list[int] = []
    run = log.db._exec
    seen = [0]

    def exec_(conn: Any, st: Any) -> Any:
        if not st.sql.startswith("INSERT INTO audit "):
            return run(conn, st)
        before = file_state(store)
        try:
            return run(conn, st)
        finally:
            seen[0] += 1
            if file_state(store) != before:
                changed.append(seen[0])

    log.db._exec = exec_
    return changed


def wal_frames(store: Path) -> int:
    """Frames of the log's current generation up to its last commit (what a checkpoint has not restarted
    yet; the frames after it are a rolled-back transaction's: the log grown at start, ``wal_presize.py``)."""
    data = Path(f"{store}-wal").read_bytes()
    page, salt = int.from_bytes(data[8:12], "big"), data[16:24]
    n, last, off = 0, 0, 32
    while off + 24 + page <= len(data) and data[off + 8:off + 16] == salt:
        n, off = n + 1, off + 24 + page
        if data[off - 24 - page + 4:off - 24 - page + 8] != bytes(4):  # a commit's last frame
            last = n
    return last


async def test_no_row_of_a_call_alone_checkpoints_in_its_commit(tmp_path: Path, monkeypatch: Any) -> None:
    # the file read around each commit makes commits slow: the caller's thread would be left for a while
    monkeypatch.setattr(inline_policy, "SLOW_S", float("inf"))
    monkeypatch.setattr(inline_policy, "STALL_S", float("inf"))
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    start = file_state(store)
    changed = watch_inserts(log, store)
    most = 0
    try:
        for i in range(ROWS):
            await log.write(entry(i), alone=True)
            await log.db.query("SELECT 1")  # the writer's queue run through: the next row is alone again
            most = max(most, wal_frames(store))
        assert log.db.inline_commits == ROWS  # every row on the caller's thread, where a checkpoint was held
        runs = getattr(log.db, "idle_checkpoint", None)
        rows = await log.read(tail=ROWS)
    finally:
        await log.close()
    assert changed == []  # main: the rows that took the log past 1,000 pages ([313, 632] in one run)
    # checkpoints ran, elsewhere
    assert runs is not None and runs.runs == ROWS // EVERY_COMMITS and file_state(store) != start
    assert most < 1000  # the log never grew to SQLite's own checkpoint
    report = verify_file(store)
    assert report.problem is None and report.broken_row is None and report.rows == ROWS, report
    assert len(rows) == ROWS and len(await read_audit(store, tail=ROWS)) == ROWS  # every row read back


async def test_rows_from_many_callers_keep_their_chain_across_checkpoints(tmp_path: Path) -> None:
    """Group commits on the writer thread, rows alone between them, checkpoint jobs queued among both."""
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    try:
        for r in range(25):  # ~12 commits a round: ~300
            await asyncio.gather(*(log.write(entry(r * 50 + i)) for i in range(40)))
            for i in range(40, 50):
                await log.write(entry(r * 50 + i), alone=True)
        runs = log.db.idle_checkpoint.runs
    finally:
        await log.close()
    assert runs >= 1
    report = verify_file(store)
    assert report.problem is None and report.broken_row is None and report.rows == 1250, report
    with closing(sqlite3.connect(store)) as c:
        assert c.execute("SELECT rows FROM audit_head").fetchall() == [(1250,)]
        ids = [r[0] for r in c.execute("SELECT id FROM audit ORDER BY id")]
    assert ids == list(range(1, 1251))


async def test_a_reader_copying_the_file_holds_the_checkpoint_off(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    try:
        for i in range(10):
            await log.write(entry(i), alone=True)
        with copy_hold(store):
            before = file_state(store)
            for i in range(10, 10 + 2 * EVERY_COMMITS):
                await log.write(entry(i), alone=True)
                await log.db.query("SELECT 1")
            assert file_state(store) == before and log.db.idle_checkpoint.runs == 0
        await asyncio.sleep(0.06)  # past the writer's next look for readers (``copy_hold.CHECK_EVERY_S``)
        for i in range(10 + 2 * EVERY_COMMITS, 10 + 3 * EVERY_COMMITS):
            await log.write(entry(i), alone=True)
            await log.db.query("SELECT 1")
        assert log.db.idle_checkpoint.runs == 1 and file_state(store) != before
    finally:
        await log.close()
    assert verify_file(store).rows == 10 + 3 * EVERY_COMMITS


_WRITE_THEN_DIE = """
import asyncio, os, signal, sys
from pathlib import Path
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
async def main():
    log = await AuditLog(Path(sys.argv[1])).open()
    for i in range(int(sys.argv[2])):
        e = AuditEntry(session=f"s{i % 3}", tool="t", decision="allow", outcome="ok", arguments={"i": i})
        print(await log.write(e, alone=True), flush=True)
        if i % 7 == 0:
            await log.db.query("SELECT 1")  # now and then the writer runs its queue (checkpoints)
    print(log.db.idle_checkpoint.runs, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
asyncio.run(main())
"""


def test_kill_9_after_checkpoints_loses_no_row_whose_write_returned(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", _WRITE_THEN_DIE, str(store), "650"], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == -signal.SIGKILL, p.stderr
    *returned, runs = p.stdout.split()
    assert len(returned) == 650 and int(runs) >= 2
    report = verify_file(store)
    assert report.problem is None and report.broken_row is None and report.rows == 650, report
    with closing(sqlite3.connect(store)) as c:
        assert {r[0] for r in c.execute("SELECT decision_id FROM audit")} == set(returned)
