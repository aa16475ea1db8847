"""Audit rows written in batches (``gateway/audit_batch.py``): many concurrent rows share two statements, and
nothing else changes: every row durable before its write returns, in chain order, a row that fails alone
fails alone, a caller that gives up cancels nobody else's row, a batch the writer could not read takes no
more rows, and two writers of one chain still chain onto each other."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, canonical
from sentinel_mcp.gateway.audit_batch import MAX_ROWS, RowBatch, batchable
from sentinel_mcp.gateway.audit_chain import verify_file
from sentinel_mcp.gateway.audit_schema import HASHED
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.storage import StorageError

from .rig import audit_rows, recorder_config


def entry(i: int | str, **kw: object) -> AuditEntry:
    fields: dict = {"session": f"s{i}", "tool": "t", "decision": "allow", "outcome": "ok",
                    "arguments": {"i": i}, **kw}
    return AuditEntry(**fields)


def stored(path: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(path) as c:
        return c.execute("SELECT session, prev_hash, hash FROM audit ORDER BY id").fetchall()


def head_rows(path: Path) -> int:
    with sqlite3.connect(path) as c:
        return int(c.execute("SELECT rows FROM audit_head WHERE chain = 'main'").fetchone()[0])


def good(path: Path, rows: int) -> None:
    report = verify_file(path)
    assert report.problem is None and report.broken_row is None and report.rows == rows, report
    assert head_rows(path) == rows
    chain = stored(path)
    assert all(chain[i][1] == chain[i - 1][2] for i in range(1, len(chain)))


async def test_concurrent_rows_share_commits_and_keep_their_order(tmp_path: Path) -> None:
    log = await AuditLog(tmp_path / "a.db").open()
    try:
        commits = log.db.commits
        ids = await asyncio.gather(*(log.write(entry(i)) for i in range(300)))
        assert len(set(ids)) == 300
        # every row in the store (read through it: it holds the file) when its write returned, in order
        rows = await log.db.query("SELECT session FROM audit ORDER BY id")
        assert [r[0] for r in rows] == [f"s{i}" for i in range(300)]
        assert log.db.commits - commits < 300 // MAX_ROWS + 3  # not one commit, nor two statements, a row
    finally:
        await log.close()
    good(tmp_path / "a.db", 300)


async def test_rows_arriving_over_many_turns_of_the_loop_land_in_order(tmp_path: Path) -> None:
    log = await AuditLog(tmp_path / "a.db").open()

    async def writer(k: int) -> None:
        for j in range(40):
            await log.write(entry(f"{k}-{j}"))
            if j % 3 == k % 3:
                await asyncio.sleep(0)

    try:
        await asyncio.gather(*(writer(k) for k in range(12)))
    finally:
        await log.close()
    good(tmp_path / "a.db", 480)
    rows = [s for s, _, _ in stored(tmp_path / "a.db")]
    for k in range(12):  # each writer's rows in its own order
        mine = [r for r in rows if r.startswith(f"s{k}-")]
        assert mine == [f"s{k}-{j}" for j in range(40)]


@pytest.mark.parametrize("bad", [
    {"session": None},  # NOT NULL column left empty
    {"tool": None},
    {"policy_version": "v\ud800"},  # a lone surrogate where the row keeps the text as given
    {"upstream": "up\udfff"},
    {"ts": float("nan")},  # bound as NULL: the NOT NULL column's error
    {"latency_ms": 2**64},  # past what SQLite binds
    {"latency_ms": float("inf")},
])
async def test_a_row_that_fails_alone_fails_alone(tmp_path: Path, bad: dict) -> None:
    log = await AuditLog(tmp_path / "a.db").open()
    try:
        entries = [entry(i) for i in range(60)]
        entries[30] = entry(30, **bad)
        out = await asyncio.gather(*(log.write(e) for e in entries), return_exceptions=True)
        failed = [i for i, r in enumerate(out) if isinstance(r, BaseException)]
        assert failed in ([], [30])  # the bad one alone (or stored, escaped), never the others
        later = await asyncio.gather(*(log.write(entry(f"after{i}")) for i in range(20)))
        assert len(later) == 20
    finally:
        await log.close()
    sessions = [s for s, _, _ in stored(tmp_path / "a.db")]
    assert [s for s in sessions if s != "s30"] == [f"s{i}" for i in range(60) if i != 30] + [
        f"safter{i}" for i in range(20)]
    good(tmp_path / "a.db", len(sessions))


def test_only_rows_that_cannot_fail_alone_are_batched() -> None:
    def values(**kw: object) -> tuple:
        row: dict = {c: "x" for c in HASHED}
        row.update(ts=1.5, latency_ms=None, arguments=None)
        row.update(kw)
        return tuple(row[c] for c in HASHED)

    def ok(v: tuple) -> bool:
        try:
            text = canonical(v)
        except (TypeError, ValueError):
            return False  # not even hashable as a row: never batched either (write() hashes it first)
        return batchable(v, text)

    assert ok(values())
    assert ok(values(reason="déjà vu ✓", latency_ms=3))  # text beyond ASCII, an int
    assert ok(values(latency_ms=2**63 - 1)) and ok(values(latency_ms=-(2**63)))
    for spoiled in ({"session": None}, {"ts": None}, {"outcome": None}, {"tool": None},
                    {"reason": "a\ud800b"}, {"upstream": "\udfff"}, {"reason": b"bytes"},
                    {"latency_ms": True}, {"proof": ["list"]}, {"error": {"k": 1}}, {"ts": object()},
                    {"ts": float("nan")}, {"latency_ms": float("-inf")}, {"latency_ms": 2**63},
                    {"latency_ms": -(2**63) - 1},
                    {"ts": "1.5"}, {"latency_ms": "3"}):  # a text where PostgreSQL's list casts to a number
        assert not ok(values(**spoiled)), spoiled


async def test_a_batch_takes_no_row_once_read_answered_full_or_out_of_its_chain() -> None:
    loop = asyncio.get_running_loop()
    row = tuple("x" for _ in HASHED)
    b = RowBatch("main")
    w1, w2 = loop.create_future(), loop.create_future()
    assert b.add(row, "h0", "h1", w1, "m1") and b.add(row, "h1", "h2", w2)
    assert not b.add(row, "h9", "h10", loop.create_future())  # not the next link
    other = asyncio.new_event_loop()
    try:  # a caller waiting on another loop: its future is never settled from this one
        assert not b.add(row, "h2", "h3", other.create_future())
    finally:
        other.close()
    statements = list(b)
    assert not b.add(row, "h2", "h3", loop.create_future())  # read by the writer: sealed
    assert b.size == 2 and list(b) == statements  # the same statements if read again
    (insert,) = statements  # one statement: the schema's trigger moves the head with each row
    width = len(HASHED) + 3  # then prev_hash, hash and the row's seal (gateway/audit_seal.py)
    assert insert.params[width - 3:width] == ("h0", "h1", "m1") and insert.params[-3:] == ("h1", "h2", None)
    assert len(insert.params) == 2 * width
    w2.cancel()  # its caller gave up: the others are answered all the same
    b.set_result(["a", "b"])
    assert w1.result() == ["a", "b"] and w2.cancelled() and b.done()
    full = RowBatch("main")
    for i in range(MAX_ROWS):
        assert full.add(row, f"h{i}", f"h{i + 1}", loop.create_future())
    assert not full.add(row, f"h{MAX_ROWS}", f"h{MAX_ROWS + 1}", loop.create_future())
    # answered before the writer read it (it failed first): no row may join it, or it would never be written
    failed = RowBatch("main")
    w = loop.create_future()
    assert failed.add(row, "h0", "h1", w)
    failed.set_exception(StorageError("injected"))
    assert isinstance(w.exception(), StorageError)
    assert not failed.add(row, "h1", "h2", loop.create_future())


async def test_a_caller_that_gives_up_cancels_no_other_row(tmp_path: Path) -> None:
    log = await AuditLog(tmp_path / "a.db").open()
    try:
        tasks = [asyncio.ensure_future(log.write(entry(i))) for i in range(40)]
        await asyncio.sleep(0)  # every row chained and in its batch
        for i in (3, 17, 39):
            tasks[i].cancel()
        out = await asyncio.gather(*tasks, return_exceptions=True)
        assert [i for i, r in enumerate(out) if isinstance(r, asyncio.CancelledError)] == [3, 17, 39]
        assert all(isinstance(r, str) for i, r in enumerate(out) if i not in (3, 17, 39))
        await log.write(entry("after"))
    finally:
        await log.close()
    # the rows of the callers that gave up were written with their batch (as a single row's job was)
    assert [s for s, _, _ in stored(tmp_path / "a.db")] == [f"s{i}" for i in range(40)] + ["safter"]
    good(tmp_path / "a.db", 41)


async def test_a_batch_the_writer_could_not_read_takes_no_more_rows(tmp_path: Path) -> None:
    log = await AuditLog(tmp_path / "a.db").open()
    db = log.db
    real = db._ensure_connection
    try:
        await log.write(entry("first"))

        def broken() -> sqlite3.Connection:
            raise StorageError("audit store: injected fault")

        db._ensure_connection = broken
        failed = await asyncio.gather(*(log.write(entry(f"lost{i}")) for i in range(10)),
                                      return_exceptions=True)
        assert all(isinstance(r, StorageError) for r in failed)
        assert not db.health.ok
        db._ensure_connection = real
        # the next rows are chained onto what is really stored, in batches again
        await asyncio.gather(*(log.write(entry(f"next{i}")) for i in range(30)))
        assert db.health.ok
    finally:
        await log.close()
    assert [s for s, _, _ in stored(tmp_path / "a.db")] == ["sfirst"] + [f"snext{i}" for i in range(30)]
    good(tmp_path / "a.db", 31)


async def test_two_writers_of_one_chain_still_chain_onto_each_other(tmp_path: Path) -> None:
    """Two logs of one chain on one file (as two gateways of one store before instances): each one's
    batches are chained onto its own idea of the head; a batch whose head moved inserts nothing and its rows
    are chained again, one by one."""
    one = await AuditLog(tmp_path / "a.db").open()
    two = await AuditLog(tmp_path / "a.db").open()
    try:
        await asyncio.gather(*(log.write(entry(f"{n}{i}")) for i in range(60) for n, log in
                               (("a", one), ("b", two))))
    finally:
        await one.close()
        await two.close()
    sessions = [s for s, _, _ in stored(tmp_path / "a.db")]
    assert sorted(sessions) == sorted([f"sa{i}" for i in range(60)] + [f"sb{i}" for i in range(60)])
    good(tmp_path / "a.db", 120)


async def test_concurrent_calls_through_the_gateway_each_decided_before_their_outcome(tmp_path: Path) -> None:
    config = recorder_config(tmp_path)
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            results = await asyncio.gather(*(c.call_tool("rec__do", {"mark": f"m{i}"}) for i in range(40)))
    assert not any(r.is_error for r in results)
    rows = audit_rows(config.store_path)
    for r in results:
        mine = [x for x in rows if x["decision_id"] == r.meta[META_KEY]]
        assert [(x["event"], x["outcome"]) for x in mine] == [("decision", "forwarded"), ("outcome", "ok")]
        assert mine[0]["id"] < mine[1]["id"]


async def test_a_batch_the_store_refused_to_queue_is_not_joined(tmp_path: Path) -> None:
    """A store that refuses the job (its writer stopped): that write fails, and the next rows do not wait on
    a batch nobody will run."""
    log = await AuditLog(tmp_path / "a.db").open()
    db = log.db
    real = db.submit_open
    try:
        def closed(statements: object, answer: object) -> None:
            raise StorageError("audit store is closed")

        db.submit_open = closed
        with pytest.raises(StorageError):
            await log.write(entry("refused"))
        db.submit_open = real
        await asyncio.wait_for(asyncio.gather(*(log.write(entry(f"next{i}")) for i in range(10))), 30)
    finally:
        await log.close()
    assert [s for s, _, _ in stored(tmp_path / "a.db")] == [f"snext{i}" for i in range(10)]
    good(tmp_path / "a.db", 10)


async def test_batched_rows_do_not_ask_asyncio_for_the_loop_each(tmp_path: Path) -> None:
    """CPython 3.11's ``asyncio.get_running_loop`` makes a ``getpid`` system call each time (issue 21: 7.7 per
    guarded call); a row, its batch and its queued job take the loop kept by ``core/running_loop.py``."""
    log = await AuditLog(tmp_path / "a.db").open()
    try:
        await asyncio.gather(*(log.write(entry(i)) for i in range(4)))  # the loop found once
        asked = 0
        real = asyncio.get_running_loop

        def counted() -> asyncio.AbstractEventLoop:
            nonlocal asked
            asked += 1
            return real()

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(asyncio, "get_running_loop", counted)
            await asyncio.gather(*(log.write(entry(i)) for i in range(4, 100)))
        assert asked == 0
    finally:
        await log.close()
    good(tmp_path / "a.db", 100)
