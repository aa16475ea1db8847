"""The audit rows' seal (``gateway/audit_seal.py``): a keyed MAC (the cluster's seal key, purpose "audit")
over each row's canonical text, so over its principal and every hashed column. The chain alone is plain
sha256: a database writer (a replica's credentials, a DBA) who edits a row and re-chains everything
after it (head too) passes ``audit verify``'s chain walk; the readers that filter by principal (the
console's Activity page, ``sentinel-mcp audit``, the replay) must not attribute such a row to anyone.
Attacks are written in SQL, as that writer would: real SQLite and real PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, canonical, chain_hash, read_audit
from sentinel_mcp.gateway.audit_cluster import verify_server
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED
from sentinel_mcp.storage.row_signature import derived_key

pytestmark = pytest.mark.timeout(120)
KEY = derived_key(b"audit-seal-test-key-0123456789abcdef", "audit")
OTHER_KEY = derived_key(b"some-other-clusters-key-0123456789ab", "audit")


def sql(location: str, text: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The hostile writer: plain SQL on the store, as its credentials allow."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            cur = conn.execute(text.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []
    conn = sqlite3.connect(location)
    try:
        rows = conn.execute(text, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def rechain(location: str, chain: str) -> None:
    """Recompute every row's prev_hash/hash of ``chain`` and its head from what the rows now hold: the chain
    walk cannot tell the edit (the anchor outside the store can, where there is one: not this writer's
    concern here)."""
    rows = sql(location, f"SELECT id, {', '.join(HASHED)} FROM audit WHERE chain = ? ORDER BY id", (chain,))
    prev = GENESIS
    for row in rows:
        new = chain_hash(prev, canonical(tuple(row[1:])))
        sql(location, "UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?", (prev, new, row[0]))
        prev = new
    # the schema's trigger only moves the head on INSERT: an UPDATE of the head is the writer's own
    sql(location, "UPDATE audit_head SET hash = ?, rows = ? WHERE chain = ?", (prev, len(rows), chain))


async def written(location: str, key: bytes | None, *, alone: bool = False) -> None:
    log = await AuditLog(location, chain="replica-a", key=key).open()
    try:
        for who in ("alice", "bob", "bob", "alice"):
            await log.write(AuditEntry(session=f"{who}/c", principal=who, tool="t", decision="allow",
                                       outcome="ok", arguments={"who": who}), alone=alone)
    finally:
        await log.close()


async def reads(location: str, principal: str | None, key: bytes | None) -> list[dict]:
    """What a reader sees: through an open log (the console on a replica) and, for a file, as the CLI reads
    it (``read_audit``, the file not open in this process)."""
    log = await AuditLog(location, chain="replica-a", key=key).open()
    try:
        through_log = await log.read(50, principal=principal)
    finally:
        await log.close()
    if location.startswith("postgresql://"):
        return through_log
    from_file = await read_audit(Path(location), tail=50, principal=principal, key=key)
    # (merged by time across instances' files: compared by id)
    assert sorted((r["id"], r.get("principal"), r.get("seal")) for r in from_file) == [
        (r["id"], r.get("principal"), r.get("seal")) for r in through_log]
    return through_log


@pytest.mark.parametrize("alone", [False, True])  # batched, and committed inline (each its own statement)
async def test_sealed_rows_read_back_attributed(store_location: str, alone: bool) -> None:
    await written(store_location, KEY, alone=alone)
    mine = await reads(store_location, "alice", KEY)
    assert [(r["principal"], r["seal"]) for r in mine] == [("alice", "signed")] * 2
    every = await reads(store_location, None, KEY)
    assert [r["principal"] for r in every] == ["alice", "bob", "bob", "alice"]
    assert all(isinstance(m, str) and len(m) == 64 for (m,) in sql(store_location, "SELECT mac FROM audit"))


@pytest.mark.parametrize("edit", [
    # bob's row relabelled alice's: the Activity page would have listed it among alice's calls
    "UPDATE audit SET principal = 'alice' WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    # ...its MAC moved with it from one of alice's own rows (a valid MAC, of another row)
    "UPDATE audit SET principal = 'alice', mac = (SELECT MIN(mac) FROM audit WHERE principal = 'alice') "
    "WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    # alice's row given to bob (bob's filter must not show it either)
    "UPDATE audit SET principal = 'bob' WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'alice')",
    # the content changed, principal kept
    "UPDATE audit SET tool = 'dev__type_text' WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    # the MAC wiped, or of another case, or not hex
    "UPDATE audit SET principal = 'alice', mac = NULL "
    "WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    "UPDATE audit SET principal = 'alice', mac = UPPER(mac) "
    "WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    "UPDATE audit SET principal = 'alice', mac = 'é' "
    "WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
])
async def test_a_rechained_edit_is_tampered_never_attributed(store_location: str, edit: str) -> None:
    await written(store_location, KEY)
    before = {r["id"]: r for r in await reads(store_location, None, KEY)}
    sql(store_location, edit)
    rechain(store_location, "replica-a")
    changed = [rid for rid, r in before.items()
               if sql(store_location, "SELECT principal, tool, mac FROM audit WHERE id = ?", (rid,))[0]
               != (r["principal"], r["tool"], r["mac"])]
    assert len(changed) == 1
    for who in ("alice", "bob"):
        theirs = await reads(store_location, who, KEY)
        assert changed[0] not in {r["id"] for r in theirs}, (who, edit)
        assert all(r["principal"] == who and r["seal"] == "signed" for r in theirs)
    every = {r["id"]: r for r in await reads(store_location, None, KEY)}
    # a MAC wiped reads as a row from before the seal: "unsigned", as unattributed as "tampered"
    assert every[changed[0]]["seal"] == ("unsigned" if "mac = NULL" in edit else "tampered")
    assert every[changed[0]]["principal"] is None
    if store_location.startswith("postgresql://"):  # the anchors share the database: the seal is what tells
        assert verify_server(store_location).ok  # the chain walk alone passes the re-chained edit
        report = verify_server(store_location, KEY)
        assert not report.ok and report.broken_row == changed[0], report.problem
        assert "seal (MAC)" in (report.problem or "")
    # the rows re-chained after it keep their own MACs (their place is the chain's and anchor's to vouch for)
    assert [r["seal"] for rid, r in every.items() if rid != changed[0]] == ["signed"] * 3


async def test_a_row_inserted_in_sql_with_a_correct_chain_is_tampered(store_location: str) -> None:
    await written(store_location, KEY)
    template = sql(store_location, f"SELECT {', '.join(HASHED)}, mac FROM audit WHERE principal = 'alice' "
                                   "ORDER BY id LIMIT 1")[0]
    head = sql(store_location, "SELECT hash FROM audit_head WHERE chain = 'replica-a'")[0][0]
    values = (*template[:2], "forged-decision", *template[3:-3], "alice", template[-2])
    new = chain_hash(head, canonical(values))
    cols = ", ".join((*HASHED, "prev_hash", "hash", "mac"))
    # the trigger moves the head with it: the chain walk finds nothing wrong
    sql(store_location, f"INSERT INTO audit ({cols}) VALUES ({', '.join('?' * (len(HASHED) + 3))})",
        (*values, head, new, template[-1]))
    assert "forged-decision" not in {r["decision_id"] for r in await reads(store_location, "alice", KEY)}
    forged = [r for r in await reads(store_location, None, KEY) if r["decision_id"] == "forged-decision"]
    assert [(r["seal"], r["principal"]) for r in forged] == [("tampered", None)]


async def test_rows_sealed_with_another_key_are_not_attributed(store_location: str) -> None:
    await written(store_location, OTHER_KEY)
    assert await reads(store_location, "alice", KEY) == []
    every = await reads(store_location, None, KEY)
    assert {(r["seal"], r["principal"]) for r in every} == {("tampered", None)}


async def test_verify_passes_a_sealed_record_and_counts_rows_from_before(pg_url: str) -> None:
    await written(pg_url, None)
    await written(pg_url, KEY)
    report = verify_server(pg_url, KEY)
    assert report.ok and report.rows == 8 and report.unsealed == 4, report.problem
    # a seal wiped after the chain was sealed: removed, not "from before"
    sql(pg_url, "UPDATE audit SET mac = NULL WHERE id = (SELECT MAX(id) FROM audit)")
    report = verify_server(pg_url, KEY)
    assert not report.ok and "was removed" in (report.problem or "")


async def test_rows_from_before_the_seal_are_said_unsigned_not_attributed(store_location: str) -> None:
    """Rows written without a key (a SQLite store before a seal key was configured): once a key is set they
    are listed as unsigned, and a principal's filter does not claim them."""
    await written(store_location, None)
    log = await AuditLog(store_location, chain="replica-a", key=KEY).open()
    try:
        await log.write(AuditEntry(session="alice/c", principal="alice", tool="t", decision="allow",
                                   outcome="ok"))
    finally:
        await log.close()
    assert [r["seal"] for r in await reads(store_location, "alice", KEY)] == ["signed"]
    assert [(r["seal"], r["principal"]) for r in await reads(store_location, None, KEY)] == [
        ("unsigned", None)] * 4 + [("signed", "alice")]


async def test_a_log_read_without_a_key_is_read_as_before(tmp_path: Path) -> None:
    """An embedded store without a seal key (docs/durability.md says why no local key file): its rows carry
    no MAC and its readers trust the file, as the chain and the anchor outside the data dir guard it."""
    location = str(tmp_path / "sentinel.db")
    await written(location, None)
    rows = await reads(location, "alice", None)
    assert [(r["principal"], r.get("seal")) for r in rows] == [("alice", None)] * 2
    assert sql(location, "SELECT DISTINCT mac FROM audit") == [(None,)]
