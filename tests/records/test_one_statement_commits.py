"""A commit of one statement (``SQLiteDatabase._commit_statement``) and the audit head moved by the schema's
trigger (``audit_schema.py``): an audit commit is one statement, in SQLite's own transaction, and the record
is what it was: durable when the write returns (a process killed right after, or mid-load), all of a failing
statement or nothing, a row not chained onto the head never inserted, and a log from before the trigger
migrated with its chain going on."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_chain import verify_file
from sentinel_mcp.storage import Schema, Statement, open_database
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.database import StatementError
from sentinel_mcp.storage.sqlite import SHARED

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT UNIQUE)"]})


def entry(i: int) -> AuditEntry:
    return AuditEntry(session=f"s{i % 16}", tool="t", decision="allow", outcome="ok", arguments={"i": i})


def intact(path: Path, rows: int) -> None:
    report = verify_file(path)
    assert report.problem is None and report.broken_row is None and report.rows == rows, report
    with closing(sqlite3.connect(path)) as c:
        assert c.execute("SELECT rows FROM audit_head").fetchall() == [(rows,)]


def child(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env=env)


_WRITE_THEN_DIE = """
import asyncio, os, sys
from pathlib import Path
from sentinel_mcp.storage import Schema, Statement, open_database
SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT UNIQUE)"]})
async def main():
    db = open_database(Path(sys.argv[1]), "t")
    await db.migrate(SCHEMA)
    await db.run([Statement("INSERT INTO t (x) VALUES (?), (?)", ("a", "b"))])
    got = await db.run([Statement("INSERT INTO t (x) VALUES (?) RETURNING id", ("c",))])
    print(got[0].rows[0][0], flush=True)
    os._exit(0)  # no close, no checkpoint: the process dies with its log as a crash leaves it
asyncio.run(main())
"""


def test_a_statement_alone_is_committed_when_its_write_returns(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    p = child(_WRITE_THEN_DIE, str(db))
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0 and out.strip() == "3"
    with closing(sqlite3.connect(db)) as c:
        assert c.execute("SELECT id, x FROM t ORDER BY id").fetchall() == [(1, "a"), (2, "b"), (3, "c")]


async def test_a_statement_alone_that_fails_leaves_nothing_and_the_store_goes_on(tmp_path: Path) -> None:
    db = open_database(tmp_path / "t.db", "t")
    try:
        await db.migrate(SCHEMA)
        await db.run([Statement("INSERT INTO t (x) VALUES (?)", ("a",))])
        with pytest.raises(StatementError) as got:  # its second row breaks UNIQUE: none of its rows stays
            await db.run([Statement("INSERT INTO t (x) VALUES (?), (?), (?)", ("b", "a", "c"))])
        assert isinstance(got.value.__cause__, sqlite3.IntegrityError)
        assert db.health.ok
        await db.run([Statement("INSERT INTO t (x) VALUES (?)", ("d",))])
        assert [r[0] for r in await db.query("SELECT x FROM t ORDER BY id")] == ["a", "d"]
    finally:
        await release(db)
    with closing(sqlite3.connect(tmp_path / "t.db")) as c:  # another connection: only what was committed
        assert [r[0] for r in c.execute("SELECT x FROM t ORDER BY id")] == ["a", "d"]


@pytest.mark.parametrize("shared", [False, True])
async def test_only_a_file_this_process_alone_writes_commits_without_begin(tmp_path: Path,
                                                                         shared: bool) -> None:
    """A statement alone on an exclusive file is its own transaction; on a file other processes write (the
    rollback journal) it still waits for the write lock up front (``BEGIN IMMEDIATE``)."""
    db = open_database(tmp_path / "t.db", "t", *([SHARED] if shared else []))
    try:
        await db.migrate(SCHEMA)
        ran: list[str] = []
        db._conn.set_trace_callback(ran.append)
        await db.run([Statement("INSERT INTO t (x) VALUES (?)", ("a",))])
        db._conn.set_trace_callback(None)
    finally:
        await release(db)
    writes = [s for s in ran if not s.startswith("PRAGMA")]
    if shared:
        assert writes[0] == "BEGIN IMMEDIATE" and writes[-1] == "COMMIT"
    else:
        assert writes == ["INSERT INTO t (x) VALUES ('a')"]


async def test_an_audit_commit_is_one_statement(tmp_path: Path) -> None:
    log = await AuditLog(tmp_path / "sentinel.db").open()
    try:
        await log.write(entry(0))
        ran: list[str] = []
        log.db._conn.set_trace_callback(ran.append)
        commits = log.db.commits
        await asyncio.gather(*(log.write(entry(i)) for i in range(1, 41)))
        log.db._conn.set_trace_callback(None)
        commits = log.db.commits - commits
    finally:
        await log.close()
    # SQLite traces a statement again for each firing of its trigger: one statement, repeated in a row
    statements = [s for i, s in enumerate(ran) if not s.startswith("PRAGMA") and (i == 0 or ran[i - 1] != s)]
    assert len(statements) == commits and all(s.startswith("INSERT INTO audit") for s in statements)
    intact(tmp_path / "sentinel.db", 41)


async def test_a_row_not_chained_onto_the_head_is_not_inserted(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    for i in range(3):
        await log.write(entry(i))
    await log.close()
    columns = "chain, ts, decision_id, event, session, origin, tool, decision, outcome, prev_hash, hash"
    with closing(sqlite3.connect(store)) as c:
        first_hash, head = c.execute(
            "SELECT (SELECT hash FROM audit WHERE id = 1), hash FROM audit_head").fetchone()
        for prev in (first_hash, "0" * 64, "x", None):  # a replayed link, the genesis, junk, nothing
            c.execute(f"INSERT INTO audit ({columns}) VALUES ('main', 1, 'd', 'decision', 's', 'o', 't', "
                      "'allow', 'ok', ?, ?)", (prev, "f" * 64))
        c.commit()
        assert c.execute("SELECT count(*) FROM audit").fetchone()[0] == 3
        assert c.execute("SELECT hash FROM audit_head").fetchone()[0] == head
    intact(store, 3)


async def test_a_log_from_before_the_trigger_is_migrated_and_its_chain_goes_on(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    for i in range(5):
        await log.write(entry(i))
    await log.close()
    c = sqlite3.connect(store)  # as schema version 3 left it: the head moved by its own UPDATE
    c.execute("DROP TRIGGER audit_advance")
    c.execute("CREATE INDEX audit_ts ON audit(ts)")
    c.execute("UPDATE storage_schema SET version = 3 WHERE store = 'audit'")
    c.commit()
    c.close()
    log = await AuditLog(store).open()
    try:
        await asyncio.gather(*(log.write(entry(i)) for i in range(5, 25)))
        await log.write(entry(25), alone=True)
    finally:
        await log.close()
    intact(store, 26)
    with closing(sqlite3.connect(store)) as c:
        indexes = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "audit_ts" not in indexes and "audit_decision" not in indexes and "audit_session" in indexes


# every read the product makes of a SQLite audit log (``gateway/audit.py``, ``console/chain_view.py``) but the
# principal's (never indexed): none walks the whole table
READS = [
    "SELECT * FROM audit WHERE session = ? ORDER BY id DESC LIMIT ?",
    "SELECT * FROM audit WHERE session = ? AND principal = ? ORDER BY id DESC LIMIT ?",
    "SELECT * FROM audit ORDER BY id DESC LIMIT ?",
    "SELECT hash FROM audit WHERE id = ?",
    "SELECT * FROM audit WHERE id > ? ORDER BY id",
    "SELECT * FROM audit WHERE chain = ? AND id > ? ORDER BY id",
]


async def test_the_logs_reads_keep_their_indexes(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    await asyncio.gather(*(log.write(entry(i)) for i in range(200)))
    await log.close()
    with closing(sqlite3.connect(store)) as c:
        c.execute("ANALYZE")
        for sql in READS:
            plan = " ".join(r[3] for r in c.execute(f"EXPLAIN QUERY PLAN {sql}", (1,) * sql.count("?")))
            if "LIMIT" in sql and "WHERE" not in sql:
                assert plan == "SCAN audit", (sql, plan)  # the newest rows, backwards along the row ids
            else:
                assert plan.startswith("SEARCH audit USING") and "SCAN" not in plan, (sql, plan)


_AUDIT_UNDER_LOAD = """
import asyncio, sys
from pathlib import Path
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
async def client(log, c):
    for i in range(100_000):
        e = AuditEntry(session=f"s{c}", tool="t", decision="allow", outcome="ok", arguments={"i": i})
        print(await log.write(e, alone=(c == 0 and i % 3 == 0)), flush=True)
async def main():
    log = await AuditLog(Path(sys.argv[1])).open()
    await asyncio.gather(*(client(log, c) for c in range(16)))
asyncio.run(main())
"""


def test_kill_9_mid_load_loses_no_row_whose_write_returned(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    p = child(_AUDIT_UNDER_LOAD, str(store))
    assert p.stdout is not None
    returned = []
    for line in p.stdout:
        returned.append(line.strip())
        if len(returned) >= 600:
            break
    os.kill(p.pid, signal.SIGKILL)
    returned += [line.strip() for line in p.stdout]  # what was printed before it died
    p.wait(timeout=30)
    report = verify_file(store)
    assert report.problem is None and report.broken_row is None, report
    with closing(sqlite3.connect(store)) as c:
        stored = {r[0] for r in c.execute("SELECT decision_id FROM audit")}
        assert c.execute("SELECT rows FROM audit_head").fetchone()[0] == len(stored)
    assert [d for d in returned if d not in stored] == []


async def test_a_writer_chaining_again_finds_its_last_row_by_its_id_or_says_it_is_lost(
        tmp_path: Path) -> None:
    """Two logs of one file (two writers of one chain): a writer whose head another moved checks, before it
    chains again, that the last row it committed is still stored (looked up by its row id, ``_durable``):
    found when it is, lost when it is not (its row gone, the head put back onto the row before, as a roll
    back under it leaves them)."""
    store = tmp_path / "sentinel.db"
    one = await AuditLog(store).open()
    two = await AuditLog(store).open()
    kept: list[tuple[int, str]] = []

    async def keep(rows: int, head: str) -> None:  # where the gateway anchors a lost head
        kept.append((rows, head))

    one.keep_lost = keep
    try:
        await asyncio.gather(*(one.write(entry(i)) for i in range(10)))  # batched: ids worked out per row
        await two.write(entry(10))
        await one.write(entry(11))  # chained again onto two's row: its own rows are all there
        assert kept == []
        await asyncio.gather(*(one.write(entry(i)) for i in range(12, 20)))
        gone, before = (await one.db.query(
            "SELECT hash, prev_hash FROM audit WHERE id = (SELECT max(id) FROM audit)"))[0]
        await one.db.write("DELETE FROM audit WHERE hash = ?", (gone,))
        await one.db.write("UPDATE audit_head SET hash = ?, rows = rows - 1", (before,))
        await one.write(entry(20))
        assert kept == [(20, gone)]
    finally:
        await one.close()
        await two.close()
