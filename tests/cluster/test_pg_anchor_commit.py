"""A cluster's audit anchor on PostgreSQL is written by one statement (``audit_cluster.write_anchor``): the
anchors' head moved from the hash the anchor was chained to and the anchor row inserted together, atomically,
one round trip (no BEGIN, no COMMIT, no statement of its own per table). What it was stays: the first anchor
starts the anchors' chain, an anchor chained to a head that moved meanwhile inserts nothing (its writer chains
again), replicas anchoring at once keep one chain of anchors. Counted from the server's own log; real
PostgreSQL."""

from __future__ import annotations

import asyncio

from tests.cluster.test_pg_audit_commits import SentLog, entry, sql

from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.gateway.audit_cluster import verify_server, write_anchor
from sentinel_mcp.gateway.audit_schema import GENESIS
from sentinel_mcp.storage.local_server import LocalServer


def _anchors_intact(url: str, anchors: int) -> None:
    report = verify_server(url)
    assert report.ok, report
    assert sql(url, "SELECT count(*) FROM audit_anchor") == [(anchors,)]
    [(head, rows)] = sql(url, "SELECT hash, rows FROM audit_anchor_head")
    assert rows == anchors
    assert sql(url, "SELECT hash FROM audit_anchor ORDER BY id DESC LIMIT 1") == [(head,)]


async def test_an_anchor_is_one_write_statement(pg_server: LocalServer, pg_url: str) -> None:
    sent = SentLog(pg_server, pg_url)
    log = await AuditLog(pg_url, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        written = []
        for round_ in range(4):
            for i in range(3):
                await log.write(entry(10 * round_ + i))
            sent.start()
            written.append(await write_anchor(log.db, "replica-a"))
            if round_ >= 2:  # the first anchors: the connection's set-up, the driver's preparing
                said = sent.sent()
                writes = [s for s in said if not s.lstrip().upper().startswith("SELECT")]
                # the two reads (the chains' heads, the last anchor) and ONE write: no BEGIN, no COMMIT
                assert len(writes) == 1 and "audit_anchor" in writes[0], said
                assert not any(s.strip().upper() in ("BEGIN", "COMMIT") for s in said), said
        assert all(written) and len(set(written)) == 4
        assert await write_anchor(log.db, "replica-a") is None  # nothing moved: no anchor
    finally:
        await log.close()
    _anchors_intact(pg_url, 4)
    assert sql(pg_url, "SELECT prev_hash FROM audit_anchor ORDER BY id LIMIT 1") == [(GENESIS,)]


async def test_an_anchor_chained_to_a_head_that_moved_inserts_nothing(pg_url: str, monkeypatch) -> None:
    """Another replica anchors between this one's reads and its write: this write changes nothing, and this
    replica anchors again, chained onto that one."""
    a = await AuditLog(pg_url, chain="replica-a").open()  # type: ignore[arg-type]
    b = await AuditLog(pg_url, chain="replica-b").open()  # type: ignore[arg-type]
    try:
        await a.write(entry(0))
        assert await write_anchor(a.db, "replica-a")
        await b.write(entry(1))
        run = a.db.run
        raced: list[str | None] = []

        async def racing(statements):  # the other replica's anchor lands first, once
            if not raced:  # (the replicas share one pool here: its anchor comes through this too)
                raced.append(None)
                raced[0] = await write_anchor(b.db, "replica-b")
                await a.write(entry(2))  # a chain moved again: this replica still has something to anchor
            return await run(statements)

        monkeypatch.setattr(a.db, "run", racing)
        mine = await write_anchor(a.db, "replica-a")
        assert raced[0] and mine and mine != raced[0]
        assert sql(pg_url, "SELECT prev_hash FROM audit_anchor WHERE hash = %s", mine) == [(raced[0],)]
    finally:
        await a.close()
        await b.close()
    _anchors_intact(pg_url, 3)


async def test_replicas_anchoring_at_once_keep_one_chain_of_anchors(pg_url: str) -> None:
    logs = [await AuditLog(pg_url, chain=f"replica-{c}").open() for c in "abc"]  # type: ignore[arg-type]
    try:
        for round_ in range(6):
            await asyncio.gather(*(log.write(entry(round_)) for log in logs))
            await asyncio.gather(*(write_anchor(log.db, log.chain) for log in logs))
    finally:
        for log in logs:
            await log.close()
    report = verify_server(pg_url)
    assert report.ok, report
    [(count,)] = sql(pg_url, "SELECT count(*) FROM audit_anchor")
    assert count >= 6
    _anchors_intact(pg_url, count)


async def test_an_anchor_whose_head_row_went_missing_starts_it_at_the_genesis_only(
    pg_url: str, monkeypatch
) -> None:
    """The anchors' head row deleted between an anchor's reads and its write: that write puts back the
    genesis head and inserts no anchor (never an anchor chained to what no head says), as before; the next
    try begins the anchors again from the genesis, which ``audit verify`` reports."""
    log = await AuditLog(pg_url, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        await log.write(entry(0))
        first = await write_anchor(log.db, "replica-a")
        await log.write(entry(1))
        run = log.db.run
        results = []

        async def deleting(statements):
            sql(pg_url, "DELETE FROM audit_anchor_head")
            out = await run(statements)
            results.append((out[-1].rowcount, sql(pg_url, "SELECT hash, rows FROM audit_anchor_head")))
            return out

        monkeypatch.setattr(log.db, "run", deleting)
        again = await write_anchor(log.db, "replica-a")  # its next try: the head from the genesis on
    finally:
        await log.close()
    assert first and again and results[0] == (0, [(GENESIS, 0)])
    assert sql(pg_url, "SELECT prev_hash FROM audit_anchor WHERE hash = %s", again) == [(GENESIS,)]
    assert not verify_server(pg_url).ok  # the anchors' chain begun again is told, never silent
