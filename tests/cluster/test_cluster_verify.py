"""``audit verify`` over a cluster's shared PostgreSQL record (``audit_cluster.verify_cluster``): every chain
row by row, the anchors' own chain, and each anchor's heads found in the chains. Real PostgreSQL. Each way of
rewriting the record is caught; and the rows are read a page at a time (the record of a long-running cluster
does not fit in the verifier's memory: it used to load every row, and every chain's hash at every
position)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import psycopg
import pytest

import sentinel_mcp.gateway.audit_cluster as audit_cluster
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, chain_hash
from sentinel_mcp.gateway.audit_cluster import _anchor_text, verify_cluster, verify_server, write_anchor
from sentinel_mcp.storage.open import open_database, release_blocking

pytestmark = pytest.mark.timeout(120)


async def _record(url: str) -> None:
    """Two replicas' chains, 3 x (8 rows each, then an anchor), then 5 rows more each, not anchored."""
    a = await AuditLog(url, chain="replica-a").open()  # type: ignore[arg-type]
    b = await AuditLog(url, chain="replica-b").open()  # type: ignore[arg-type]
    try:
        for round_ in range(4):
            for i in range(8 if round_ < 3 else 5):
                for log in (a, b):
                    await log.write(AuditEntry(session=f"s{round_}", tool=f"t{i}", decision="allow",
                                               outcome="ok"))
            if round_ < 3:
                assert await write_anchor(a.db, "replica-a") is not None
    finally:
        await a.close()
        await b.close()


def _sql(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        cur = conn.execute(sql, params)
        return cur.fetchall() if cur.description else []


async def test_an_intact_cluster_record_verifies(pg_url: str) -> None:
    await _record(pg_url)
    report = await asyncio.to_thread(verify_server, pg_url)
    assert report.ok and report.rows == 2 * (3 * 8 + 5), report
    assert report.counts == {"replica-a": 29, "replica-b": 29}


async def test_rows_are_read_a_page_at_a_time(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    await _record(pg_url)
    monkeypatch.setattr(audit_cluster, "PAGE", 7)
    db = open_database(pg_url, "audit")
    most: list[int] = []
    query = db.query_blocking

    def counting(sql: str, params: Any = ()) -> Any:
        rows = query(sql, params)
        most.append(len(rows))
        return rows

    db.query_blocking = counting  # type: ignore[method-assign]
    try:
        report = verify_cluster(db)
    finally:
        release_blocking(db)
    assert report.ok and report.rows == 58, report
    assert max(most) <= 7, most  # no query answered more than a page


@pytest.mark.parametrize(
    "attack, expected",
    [
        # a row's contents changed: its chain breaks at that row
        ("UPDATE audit SET outcome = 'denied' WHERE id = (SELECT min(id) + 4 FROM audit)", "altered"),
        # a chain's last anchored rows deleted and its head rewound to match: the anchor still names them
        ("rewind", "anchor"),
        # an anchor altered (its heads made to match a rewritten chain): the anchors' chain breaks
        (
            "UPDATE audit_anchor SET heads = replace(heads, '8', '7') "
            "WHERE id = (SELECT min(id) FROM audit_anchor)",
            "anchor",
        ),
        # the last anchor deleted: the anchors' head no longer matches
        ("DELETE FROM audit_anchor WHERE id = (SELECT max(id) FROM audit_anchor)", "anchor"),
        # a row deleted in the middle of a chain
        ("DELETE FROM audit WHERE id = (SELECT min(id) + 10 FROM audit)", "deleted or changed"),
    ],
)
async def test_each_rewrite_of_the_record_is_caught(pg_url: str, attack: str, expected: str) -> None:
    await _record(pg_url)
    if attack == "rewind":  # replica-b's last 10 rows gone (5 of them anchored), its head set to what is left
        ids = [r[0] for r in _sql(pg_url, "SELECT id FROM audit WHERE chain = 'replica-b' ORDER BY id")]
        _sql(pg_url, "DELETE FROM audit WHERE id = ANY(%s)", ids[-10:])
        last = _sql(pg_url, "SELECT hash FROM audit WHERE id = %s", ids[-11])[0][0]
        _sql(pg_url, "UPDATE audit_head SET hash = %s, rows = %s WHERE chain = 'replica-b'", last,
             len(ids) - 10)
    else:
        _sql(pg_url, attack)
    report = await asyncio.to_thread(verify_server, pg_url)
    assert not report.ok, report
    assert expected in (report.problem or ""), report


@pytest.mark.parametrize("heads", ["[]", '{"replica-a": ["x", "8"]}', '{"replica-a": ["x", -1]}', "not json",
                                   '{"replica-a": ["x"]}', '{"replica-a": [1, 8]}'])
async def test_an_anchor_rewritten_to_what_no_anchor_writes_is_broken_never_a_traceback(
    pg_url: str, heads: str
) -> None:
    """The anchors carry no key: someone who can write the table can recompute their hashes over any text."""
    await _record(pg_url)
    rows = _sql(pg_url, "SELECT id, ts, by_chain, prev_hash FROM audit_anchor ORDER BY id")
    aid, ts, by, prev = rows[0]
    try:  # its hash recomputed over the new text, as anyone could
        new_hash = chain_hash(prev, _anchor_text(ts, by, json.loads(heads)))
    except ValueError:
        new_hash = None
    _sql(pg_url, "UPDATE audit_anchor SET heads = %s, hash = coalesce(%s, hash) WHERE id = %s", heads,
         new_hash, aid)
    report = await asyncio.to_thread(verify_server, pg_url)
    assert not report.ok and "anchor" in (report.problem or ""), report
