"""The storage seam's contract on both backends (SQLite file, real PostgreSQL): writes, reads, atomic single
use,
group commit, one job's error failing that job alone; the stores (facts, audit, nonces) on top of it."""

from __future__ import annotations

import asyncio
import time

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.stored_nonces import SCHEMA as NONCES, StoredNonceBook
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.storage import Schema, Statement, StorageError, open_database
from sentinel_mcp.storage.database import StatementError
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.sqlite import SHARED

KV = Schema(
    "kv",
    {
        "sqlite": ["CREATE TABLE kv (k TEXT PRIMARY KEY, v REAL NOT NULL)"],
        "postgres": ["CREATE TABLE kv (k TEXT PRIMARY KEY, v DOUBLE PRECISION NOT NULL)"],
    },
)


async def open_kv(location: str):  # type: ignore[no-untyped-def]
    db = open_database(location, "kv", SHARED)
    await db.migrate(KV)
    return db


async def test_write_read_consume_and_migrations_once(store_location: str) -> None:
    db = await open_kv(store_location)
    try:
        await db.migrate(KV)  # again: applied once
        await db.write("INSERT INTO kv (k, v) VALUES (?, ?)", ("a", 1.25))
        assert await db.query("SELECT k, v FROM kv WHERE k = ?", ("a",)) == [("a", 1.25)]
        assert await db.query_dicts("SELECT k, v FROM kv") == [{"k": "a", "v": 1.25}]
        # a literal percent sign and a LIKE pattern survive the placeholder translation
        assert await db.query("SELECT k FROM kv WHERE k LIKE ? AND '5%' = '5%'", ("a%",)) == [("a",)]
        assert await db.consume("DELETE FROM kv WHERE k = ? RETURNING v", ("a",)) == [(1.25,)]
        assert await db.consume("DELETE FROM kv WHERE k = ? RETURNING v", ("a",)) == []
        assert db.health.ok
    finally:
        await release(db)


async def test_one_jobs_error_fails_that_job_alone_in_a_shared_commit(store_location: str) -> None:
    db = await open_kv(store_location)
    try:
        await db.write("INSERT INTO kv (k, v) VALUES (?, ?)", ("dup", 0.0))
        jobs = [
            db.run([Statement("INSERT INTO kv (k, v) VALUES (?, ?)", (f"k{i}", float(i)))]) for i in range(40)
        ]
        jobs.insert(20, db.run([Statement("INSERT INTO kv (k, v) VALUES (?, ?)", ("dup", 1.0))]))
        results = await asyncio.gather(*jobs, return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        # a constraint, not the store: a StatementError on both backends (the store stays healthy)
        assert len(failed) == 1 and isinstance(failed[0], StatementError) and db.health.ok
        assert (await db.query("SELECT count(*) FROM kv"))[0][0] == 41
        assert db.commits < 41  # concurrent writers shared commits
        assert db.health.ok
    finally:
        await release(db)


async def test_blocking_callers_and_many_rows(store_location: str) -> None:
    db = await open_kv(store_location)
    try:
        rows = [(f"m{i}", float(i)) for i in range(300)]
        await asyncio.to_thread(
            db.run_blocking, [Statement("INSERT INTO kv (k, v) VALUES (?, ?)", rows, many=True)]
        )
        assert (await asyncio.to_thread(db.query_blocking, "SELECT count(*) FROM kv"))[0][0] == 300
        assert await db.probe()
    finally:
        await release(db)


async def test_facts_on_both_backends(store_location: str) -> None:
    store = await FactStore(store_location).open()
    try:
        now = time.time()
        await store.add(
            [
                Fact(
                    session="s1",
                    predicate="owns",
                    args=["u1", "R-1"],
                    fact="owns(u1,'R-1')",
                    provenance="observed",
                    expires_at=now + 60,
                ),
                Fact(
                    session="s1",
                    predicate="old",
                    args=["x"],
                    fact="old(x)",
                    provenance="seed",
                    expires_at=now - 1,
                ),
            ]
        )
        assert [f.fact for f in await store.valid("s1")] == ["owns(u1,'R-1')"]
        assert await store.known_values("s1", ["R-1", "R-2"]) == {"R-1"}
        await store.bind_context("s1", "res", "R-1")
        assert await store.contexts("s1") == {"res": "R-1"}
        assert await store.purge_expired() == 1
        assert await store.sessions() == ["s1"]
        # the session counter moves with every change on a shared store (read-through mirrors)
        if store.shared:
            v = await store.version("s1")
            await store.delete("s1", ["owns(u1,'R-1')"])
            assert await store.version("s1") == v + 1
    finally:
        await store.close()


async def test_audit_chains_on_both_backends(store_location: str) -> None:
    log = await AuditLog(store_location, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        ids = await asyncio.gather(
            *(
                log.write(
                    AuditEntry(
                        session="s",
                        tool="t",
                        decision="allow",
                        outcome="ok",
                        latency_ms=None if i % 2 else 1.5,
                    )
                )
                for i in range(30)
            )
        )
        assert len(set(ids)) == 30
        assert {r["decision_id"] for r in await log.read(tail=50)} == set(ids)
        rows = await log.db.query("SELECT chain, rows FROM audit_head")
        assert rows == [("replica-a", 30)]
    finally:
        await log.close()


async def test_nonce_book_single_use_and_expiry(store_location: str) -> None:
    db = open_database(store_location, "nonces", SHARED)
    await db.migrate(NONCES)
    try:
        book = StoredNonceBook(db)
        await asyncio.to_thread(book.issue, "n1", time.time() + 60)
        await asyncio.to_thread(book.issue, "n-old", time.time() - 1)
        assert await asyncio.to_thread(book.consume, "n1") is True
        assert await asyncio.to_thread(book.consume, "n1") is False  # replay
        assert await asyncio.to_thread(book.consume, "n-old") is False  # expired
        assert await asyncio.to_thread(book.consume, "never-issued") is False
        # the gateway's path (off the event loop): the same book, the same single use, across both paths
        await book.issue_async("a1", time.time() + 60)
        await book.issue_async("a-old", time.time() - 1)
        await asyncio.to_thread(book.issue, "b1", time.time() + 60)
        assert await book.consume_async("a1") is True and await book.consume_async("a1") is False
        assert await asyncio.to_thread(book.consume, "a1") is False
        assert await book.consume_async("b1") is True and await book.consume_async("a-old") is False
        both = await asyncio.gather(*(book.consume_async(n) for n in ["a2"] * 8), book.issue_async("c", 0))
        assert not any(both[:8])  # never issued
        await book.issue_async("a2", time.time() + 60)
        raced = await asyncio.gather(*(book.consume_async("a2") for _ in range(8)))
        assert sum(raced) == 1  # eight at once: one wins
    finally:
        await release(db)


@pytest.mark.parametrize(
    "setting", ["postgresql://u:s3cr3t-pw@127.0.0.1:1/db", "postgresql://u:${PGPW}@127.0.0.1:1/db"]
)
async def test_an_unreachable_server_fails_closed_and_never_shows_the_password(
    setting: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PGPW", "s3cr3t-pw")
    db = open_database(setting, "kv-down")
    try:
        with pytest.raises(StorageError) as info:
            await db.migrate(KV)
        with pytest.raises(StorageError):
            await db.write("INSERT INTO kv (k, v) VALUES (?, ?)", ("a", 1.0))
        assert not db.health.ok and "127.0.0.1" in (db.health.cause or "")
        for text in (str(info.value), db.health.cause or "", caplog.text, repr(db.location), db.path):
            assert "s3cr3t-pw" not in text
    finally:
        await release(db)


def test_store_settings_are_checked_without_echoing_secrets() -> None:
    from sentinel_mcp.storage.location import LocationError, server_location

    with pytest.raises(LocationError, match=r"\$\{NOT_SET_ANYWHERE\}"):
        server_location("postgresql://u:${NOT_SET_ANYWHERE}@h/db", env={})
    for bad in ("postgresql://u:pw-abc@h:notaport/db", "postgresql://u:pw-abc@h:5432"):
        with pytest.raises(LocationError) as info:
            server_location(bad)
        assert "pw-abc" not in str(info.value)
    loc = server_location("postgresql://u:p%40ss@h:5432/db?sslmode=require&password=x")
    assert loc.password == "p@ss" and "p%40ss" not in loc.redacted and "password=x" not in loc.redacted


async def test_expired_facts_purged_in_batches_on_both_backends(
    store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The purge's batch statements (the same expired facts picked twice, by order and limit, in one
    transaction) delete exactly the expired facts and their value rows on either backend."""
    from sentinel_mcp.policy import fact_store

    monkeypatch.setattr(fact_store, "PURGE_BATCH", 7)
    store = await FactStore(store_location).open()
    try:
        now = time.time()
        await store.add([Fact(session=f"p{i % 3}", predicate="seat", args=[f"R{i}"], fact=f"seat('R{i}')",
                              provenance="observed", expires_at=now - 50 + i) for i in range(100)])
        assert await store.purge_expired(now) == 51  # R0..R50, in 8 batches
        left = {f.fact for s in ("p0", "p1", "p2") for f in await store.valid(s, now)}
        assert left == {f"seat('R{i}')" for i in range(51, 100)}
        assert await store.known_values("p0", [f"R{i}" for i in range(100)], now) == {
            f"R{i}" for i in range(51, 100) if i % 3 == 0}
        (rows,) = await store.db.query("SELECT COUNT(*) FROM fact_values WHERE session LIKE 'p%'")
        assert rows[0] == 49
    finally:
        await store.close()
