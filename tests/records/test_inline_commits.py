"""Commits on the caller's thread (``SQLiteDatabase.write_inline``): only while the writer is idle, in order
with the writer's jobs, durable, failing as the writer's would; and the audit rows of a call alone in the
gateway (nothing else in flight or waiting on its loop)."""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_chain import verify_file
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.gateway.idle_loop import loop_is_idle
from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage import inline_policy
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.database import StatementError
from sentinel_mcp.storage.sqlite import SHARED

from .rig import audit_rows, recorder_config

SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT UNIQUE)"]})
INSERT = "INSERT INTO t (x) VALUES (?)"


@pytest.fixture(autouse=True)
def _no_slow_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded machine's slow commit would send the next ones to the writer (their own test sets the bound):
    what these tests count must not depend on how busy the machine is."""
    monkeypatch.setattr(inline_policy, "SLOW_S", 3600.0)
    monkeypatch.setattr(inline_policy, "STALL_S", 3600.0)


def rows_of(path: Path) -> list[str]:
    with sqlite3.connect(path) as c:  # another connection: only what was committed
        return [r[0] for r in c.execute("SELECT x FROM t ORDER BY id")]


def shared(path: Path):  # noqa: ANN201 - a file other connections may read while it is open (rollback journal)
    return open_database(path, "t", SHARED)


async def test_an_idle_writer_lets_the_caller_commit_durably_on_its_own_thread(tmp_path: Path) -> None:
    db = shared(tmp_path / "a.db")
    try:
        await db.migrate(SCHEMA)
        threads: list[str] = []

        def make() -> list[Statement]:
            threads.append(threading.current_thread().name)
            return [Statement(INSERT, ("one",)), Statement(INSERT, ("two",))]

        results = db.write_inline(make)
        assert results is not None and [r.rowcount for r in results] == [1, 1]
        assert threads == [threading.current_thread().name]  # not the writer's thread
        assert db.inline_commits == 1
        assert rows_of(tmp_path / "a.db") == ["one", "two"]  # committed when it returned
        await db.write(INSERT, ("three",))  # the writer takes the connection back
        assert rows_of(tmp_path / "a.db") == ["one", "two", "three"]
    finally:
        await release(db)
    wal = open_database(tmp_path / "b.db", "t")  # the audit's kind: a write-ahead log this process owns
    try:
        await wal.migrate(SCHEMA)
        assert wal.write_inline(lambda: [Statement(INSERT, ("durable",))]) is not None
    finally:
        await release(wal)
    assert rows_of(tmp_path / "b.db") == ["durable"]


async def test_a_writer_with_work_queued_or_running_keeps_it_and_make_is_not_called(tmp_path: Path) -> None:
    db = shared(tmp_path / "a.db")
    try:
        await db.migrate(SCHEMA)
        running, go_on = threading.Event(), threading.Event()

        def slow(conn: sqlite3.Connection) -> None:
            running.set()
            go_on.wait(10)
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(INSERT, ("by the writer",))
            conn.execute("COMMIT")

        job = db._submit("call", slow)  # the writer runs it, and waits in it
        await asyncio.to_thread(running.wait, 10)
        queued = db.write(INSERT, ("queued",))  # and one more waits behind it

        def never() -> list[Statement]:
            raise AssertionError("make must not be called while the writer has work")

        assert db.write_inline(never) is None
        go_on.set()
        await job
        await queued
        assert db.write_inline(lambda: [Statement(INSERT, ("after",))]) is not None
        assert rows_of(tmp_path / "a.db") == ["by the writer", "queued", "after"]
    finally:
        go_on.set()
        await release(db)


async def test_a_job_queued_during_an_inline_commit_waits_for_it(tmp_path: Path) -> None:
    """The claim comes first: a write another thread queues while the caller holds the connection runs after
    the caller's commit, never inside its transaction."""
    db = shared(tmp_path / "a.db")
    try:
        await db.migrate(SCHEMA)
        other = threading.Thread(target=db.write_blocking, args=(INSERT, ("from another thread",)))

        def make() -> list[Statement]:
            other.start()
            time.sleep(0.2)  # the writer has the job by now, and must wait for the connection
            assert other.is_alive()
            return [Statement(INSERT, ("inline",))]

        assert db.write_inline(make) is not None
        await asyncio.to_thread(other.join, 10)
        assert rows_of(tmp_path / "a.db") == ["inline", "from another thread"]
    finally:
        await release(db)


async def test_an_inline_job_fails_alone_and_a_fault_degrades_like_the_writers(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    db = shared(path)
    try:
        await db.migrate(SCHEMA)
        assert db.write_inline(lambda: [Statement(INSERT, ("x",))]) is not None
        # the statement's own error (a StatementError carrying SQLite's), its transaction rolled back
        with pytest.raises(StatementError) as got:
            db.write_inline(lambda: [Statement(INSERT, ("y",)), Statement(INSERT, ("x",))])
        assert isinstance(got.value.__cause__, sqlite3.IntegrityError)
        assert db.health.ok and rows_of(path) == ["x"]
        os.unlink(path)
        with pytest.raises(StorageError, match="deleted or replaced"):
            db.write_inline(lambda: [Statement(INSERT, ("lost",))])
        assert not db.health.ok
        # degraded: the caller is sent to the writer (whose writes and probes notice the recovery)
        assert db.write_inline(lambda: [Statement(INSERT, ("z",))]) is None
        await db.write(INSERT, ("after",))
        assert db.health.ok and rows_of(path) == ["after"]
    finally:
        await release(db)


async def test_a_stalled_inline_commit_sends_the_next_ones_to_the_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inline_policy, "SLOW_S", 0.05)
    monkeypatch.setattr(inline_policy, "STALL_S", 0.05)  # one commit this slow turns them off at once
    db = shared(tmp_path / "a.db")
    try:
        await db.migrate(SCHEMA)

        def slow() -> list[Statement]:
            time.sleep(0.1)  # the caller's thread held longer than the bound
            return [Statement(INSERT, ("slow",))]

        assert db.write_inline(slow) is not None
        assert db.write_inline(lambda: [Statement(INSERT, ("next",))]) is None
        await db.write(INSERT, ("by the writer",))
        assert rows_of(tmp_path / "a.db") == ["slow", "by the writer"]
    finally:
        await release(db)


async def test_a_closing_store_lends_its_connection_to_nobody(tmp_path: Path) -> None:
    db = open_database(tmp_path / "a.db", "t")  # the write-ahead log one process owns, as the audit's
    await db.migrate(SCHEMA)
    await release(db)
    assert db.write_inline(lambda: [Statement(INSERT, ("late",))]) is None
    assert rows_of(tmp_path / "a.db") == []


def _entry(i: int) -> AuditEntry:
    return AuditEntry(session=f"s{i}", tool="t", decision="allow", outcome="ok", arguments={"i": i})


async def test_audit_rows_written_alone_and_in_batches_make_one_chain(tmp_path: Path) -> None:
    log = await AuditLog(tmp_path / "a.db").open()
    try:
        for round_ in range(5):
            await log.write(_entry(round_ * 100), alone=True)
            await asyncio.gather(*(log.write(_entry(round_ * 100 + k), alone=k % 2 == 0)
                                   for k in range(1, 9)))
        assert log.db.inline_commits >= 5
    finally:
        await log.close()
    report = verify_file(tmp_path / "a.db")
    assert report.problem is None and report.broken_row is None and report.rows == 45, report


async def test_a_row_alone_whose_head_moved_is_chained_again(tmp_path: Path) -> None:
    """Two logs of one chain (two writers of one file): the row committed inline onto a head another log moved
    inserts nothing, and is chained again onto what is stored."""
    one = await AuditLog(tmp_path / "a.db").open()
    two = await AuditLog(tmp_path / "a.db").open()
    try:
        await one.write(_entry(1), alone=True)
        await two.write(_entry(2), alone=True)  # two's head is the genesis: moved by one
        await one.write(_entry(3), alone=True)
    finally:
        await one.close()
        await two.close()
    report = verify_file(tmp_path / "a.db")
    assert report.problem is None and report.broken_row is None and report.rows == 3, report


async def test_a_call_alone_in_the_gateway_is_audited_inline_and_concurrent_ones_by_the_writer(
        tmp_path: Path) -> None:
    config = recorder_config(tmp_path)
    async with running_gateway(config) as rt:
        db, audit_path = rt.gateway.audit.db, rt.gateway.audit.path
        async with Client(rt.front.server) as c:
            before = db.inline_commits
            alone = [await c.call_tool("rec__do", {"mark": f"alone{i}"}) for i in range(5)]
            assert db.inline_commits - before == 10  # its decision and its outcome, each
            before, commits = db.inline_commits, db.commits
            together = await asyncio.gather(*(c.call_tool("rec__do", {"mark": f"m{i}"}) for i in range(20)))
            assert db.inline_commits - before < 40 and db.commits - commits < 40  # the writer grouped them
    rows = audit_rows(config.store_path)
    for r in alone + together:
        assert not r.is_error
        mine = [x for x in rows if x["decision_id"] == r.meta[META_KEY]]
        assert [(x["event"], x["outcome"]) for x in mine] == [("decision", "forwarded"), ("outcome", "ok")]
    report = verify_file(audit_path)
    assert report.problem is None and report.broken_row is None and report.rows == 50, report


async def test_the_loop_is_idle_only_with_nothing_ready_and_nothing_waiting_to_be_read() -> None:
    """What keeps inline commits off under load: a request waiting in a socket (not yet read by the loop) or
    a callback ready to run means someone would wait behind a commit on the loop's thread."""
    loop = asyncio.get_running_loop()
    assert loop_is_idle()
    loop.call_soon(lambda: None)
    assert not loop_is_idle()  # a callback ready to run
    await asyncio.sleep(0)
    assert loop_is_idle()
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    try:
        read = asyncio.ensure_future(reader.readline())
        await asyncio.sleep(0)  # the read is waiting on the socket
        assert loop_is_idle()
        theirs.sendall(b'{"jsonrpc": "2.0"}\n')  # a request arrived: the kernel has it, the loop not yet
        time.sleep(0.05)  # the loop busy meanwhile (as during a commit on its thread)
        assert not loop_is_idle()
        assert await read == b'{"jsonrpc": "2.0"}\n'
        assert loop_is_idle()
    finally:
        writer.close()
        theirs.close()
