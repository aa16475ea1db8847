"""The chains' heads under least privilege (real PostgreSQL 15): a serving role moves a head only by putting a
row into the record, the owner's triggers moving it from the row's ``prev_hash`` to its ``hash``. Before, the
serving role held UPDATE on ``audit_head.hash`` and ``audit_anchor_head.hash``: a compromised gateway could
set any chain's head (fork the chain, block the other replicas' writes) with nothing in the record; only the
anchor noticed, later. And it held TEMPORARY on the database (a table of its own in ``pg_temp``)."""

from __future__ import annotations

import psycopg
import pytest

from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.gateway.audit_cluster import verify_server, write_anchor
from sentinel_mcp.gateway.audit_schema import GENESIS
from sentinel_mcp.storage import server_grants
from tests.cluster.test_pg_audit_commits import entry
from tests.cluster.split_roles import Split, serving

pytestmark = pytest.mark.timeout(300)

FORGED = "f" * 64

# each a way of setting a head where the gateway likes, without a row in the record
HEAD_WRITES = [
    f"UPDATE audit_head SET hash = '{FORGED}'",
    f"UPDATE audit_head SET hash = '{FORGED}', rows = rows + 1 WHERE chain = 'replica-a'",
    "UPDATE audit_head SET rows = 0",
    f"INSERT INTO audit_head (chain, hash, rows) VALUES ('replica-a', '{GENESIS}', 0) ON CONFLICT (chain) "
    f"DO UPDATE SET hash = '{FORGED}'",
    f"INSERT INTO audit_head (chain, hash, rows) VALUES ('planted', '{FORGED}', 0)",
    f"INSERT INTO audit_head (chain, hash, rows) VALUES ('planted-2', '{GENESIS}', 7)",
    f"UPDATE audit_anchor_head SET hash = '{FORGED}'",
    f"INSERT INTO audit_anchor_head (one, hash, rows) VALUES (1, '{FORGED}', 1) ON CONFLICT (one) "
    f"DO UPDATE SET hash = '{FORGED}'",
    "DELETE FROM audit_anchor_head",
    "CREATE TEMP TABLE audit_head (chain text, hash text, rows bigint)",  # pg_temp: last in the path
    "CREATE TEMP TABLE scratch (x int)",
    "SELECT audit_advance()",  # the owner's trigger functions: not the serving role's to call
    "SELECT audit_anchor_advance()",
]


async def _write_chain(split: Split) -> list[tuple[str, str, int]]:
    """A serving gateway's chain and anchor, written through the serving role's own connection."""
    log = await AuditLog(split.url(split.server), chain="replica-a").open()  # type: ignore[arg-type]
    try:
        for i in range(3):
            await log.write(entry(i))
        assert await write_anchor(log.db, "replica-a")
        await log.write(entry(3))
        assert await write_anchor(log.db, "replica-a")
    finally:
        await log.close()
    with psycopg.connect(split.url(split.owner)) as conn:
        return conn.execute("SELECT chain, hash, rows FROM audit_head UNION ALL "
                            "SELECT 'anchors', hash, rows FROM audit_anchor_head ORDER BY 1").fetchall()


def test_the_grants_start_a_chain_where_the_record_does() -> None:
    assert server_grants.GENESIS == GENESIS  # audit_head's row security: a new chain's head at the genesis


async def test_a_serving_role_moves_the_heads_only_through_the_record(split: Split) -> None:
    split.migrate_and_grant()
    before = await _write_chain(split)
    assert [(c, n) for c, _, n in before] == [("anchors", 2), ("replica-a", 4)]
    allowed = []
    with serving(split) as conn:
        for statement in HEAD_WRITES:
            try:
                conn.execute(statement)
            except psycopg.errors.InsufficientPrivilege:
                continue
            except psycopg.Error as e:  # refused for another reason: not by the grants
                statement += f" ({type(e).__name__})"
            allowed.append(statement)
    assert allowed == []
    with psycopg.connect(split.url(split.owner)) as conn:
        after = conn.execute("SELECT chain, hash, rows FROM audit_head UNION ALL "
                             "SELECT 'anchors', hash, rows FROM audit_anchor_head ORDER BY 1").fetchall()
    assert after == before
    assert verify_server(split.url(split.owner)).ok


async def test_a_row_chained_to_an_old_head_moves_nothing(split: Split) -> None:
    """The one road left (a row into the record) cannot set a head back: a row whose ``prev_hash`` is not
    the head is not inserted, and the head stays."""
    split.migrate_and_grant()
    before = await _write_chain(split)
    with serving(split) as conn:
        done = conn.execute(
            "INSERT INTO audit (chain, ts, decision_id, event, session, origin, tool, decision, outcome, "
            "prev_hash, hash) VALUES ('replica-a', 0, 'd', 'e', 's', 'o', 't', 'allow', 'ok', %s, %s)",
            (GENESIS, FORGED))
        assert done.rowcount == 0
        done = conn.execute("INSERT INTO audit_anchor (ts, by_chain, heads, prev_hash, hash) "
                            "VALUES (0, 'replica-a', '{}', %s, %s)", (GENESIS, FORGED))
        assert done.rowcount == 0
    with psycopg.connect(split.url(split.owner)) as conn:
        after = conn.execute("SELECT chain, hash, rows FROM audit_head UNION ALL "
                             "SELECT 'anchors', hash, rows FROM audit_anchor_head ORDER BY 1").fetchall()
    assert after == before
