"""An audit commit on PostgreSQL is one statement (issue 21): the schema's trigger (``audit_schema``) moves
the chain head with each row inserted and skips a row not chained onto it; a row alone is its own transaction
(``PostgresDatabase._one_statement``), rows written together one typed multi-row ``INSERT``
(``audit_batch``). The record is what it was: a stale, replayed or forged row inserts nothing, a statement
that fails leaves nothing, replicas racing on one chain keep one chain, an older replica's statements change
nothing, and a record from before the trigger is migrated with its chain going on. Real PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, canonical, chain_hash
from sentinel_mcp.gateway.audit_cluster import verify_server
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED, SCHEMA
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.local_server import LocalServer

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
_SENT = re.compile(r"LOG:  (?:statement|execute [^:]*): (.*)")


def entry(i: int, **kw: Any) -> AuditEntry:
    return AuditEntry(**{"session": f"s{i % 16}", "tool": "t", "decision": "allow", "outcome": "ok",
                         "arguments": {"i": i}, **kw})


def sql(url: str, text: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(text, params)
        return cur.fetchall() if cur.description else []


def intact(url: str, counts: dict[str, int]) -> None:
    report = verify_server(url)
    assert report.ok and report.counts == counts, report
    assert dict(sql(url, "SELECT chain, rows FROM audit_head")) == counts


class SentLog:
    """The statements clients send to one database, from the server's own log (``log_statement``)."""

    def __init__(self, server: LocalServer, url: str) -> None:
        sql(url, f"ALTER DATABASE \"{url.rsplit('/', 1)[1]}\" SET log_statement = 'all'")
        self.file = server.root / "log"
        self.mark = 0

    def start(self) -> None:
        self.mark = self.file.stat().st_size

    def sent(self) -> list[str]:
        with open(self.file, "rb") as f:
            f.seek(self.mark)
            return [m.group(1) for m in _SENT.finditer(f.read().decode("utf-8", "replace"))]


async def test_an_audit_commit_is_one_statement(pg_server: LocalServer, pg_url: str) -> None:
    sent = SentLog(pg_server, pg_url)
    log = await AuditLog(pg_url, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        for i in range(6):  # the connection's set-up, the driver's preparing of a statement used often
            await log.write(entry(i))
        sent.start()
        for i in range(6, 26):
            await log.write(entry(i))
        alone = sent.sent()
        sent.start()
        commits = log.db.commits
        await asyncio.gather(*(log.write(entry(i)) for i in range(26, 90)))
        commits = log.db.commits - commits
        together = sent.sent()
    finally:
        await log.close()
    # a row alone: one round trip, no BEGIN, no COMMIT, no UPDATE of the head beside it
    assert len(alone) == 20 and all(s.startswith("INSERT INTO audit") for s in alone), alone[:6]
    # 64 rows written together: a few multi-row INSERTs (a batch takes the rows that come while the writer is
    # busy), never a statement per row; the head is never moved by a statement of its own
    inserts = [s for s in together if s.startswith("INSERT INTO audit")]
    assert 1 <= len(inserts) <= 8 and len(together) <= 3 * len(inserts) + 2 * commits, together
    assert not any("audit_head" in s for s in together)
    intact(pg_url, {"replica-a": 90})


async def test_a_row_not_chained_onto_the_head_inserts_nothing(pg_url: str) -> None:
    a = await AuditLog(pg_url, chain="a").open()  # type: ignore[arg-type]
    b = await AuditLog(pg_url, chain="b").open()  # type: ignore[arg-type]
    try:
        for i in range(3):
            await a.write(entry(i))
            await b.write(entry(i))
    finally:
        await a.close()
        await b.close()
    first, head = sql(pg_url, "SELECT (SELECT hash FROM audit WHERE chain = 'a' ORDER BY id LIMIT 1), hash "
                              "FROM audit_head WHERE chain = 'a'")[0]
    other_head = sql(pg_url, "SELECT hash FROM audit_head WHERE chain = 'b'")[0][0]
    columns = "chain, ts, decision_id, event, session, origin, tool, decision, outcome, prev_hash, hash"
    insert = (f"INSERT INTO audit ({columns}) VALUES (%s, 1, 'd', 'decision', 's', 'o', 't', 'allow', 'ok', "
              "%s, %s)")
    # a replayed link, the genesis, junk, nothing, the other chain's head, a chain without a head
    for chain, prev in (("a", first), ("a", GENESIS), ("a", "x"), ("a", None), ("a", other_head),
                        ("c", GENESIS), ("c", None)):
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert conn.execute(insert, (chain, prev, "f" * 64)).rowcount == 0
        with psycopg.connect(pg_url) as conn:  # a row after it in the same statement inserts nothing either
            cur = conn.execute(
                f"INSERT INTO audit ({columns}) SELECT * FROM (VALUES (%s, 1.0, 'd', 'decision', 's', 'o', "
                "'t', 'allow', 'ok', %s, %s), (%s, 2.0, 'd', 'decision', 's', 'o', 't', 'allow', 'ok', %s, "
                "%s)) AS v",
                (chain, prev, "e" * 64, chain, "e" * 64, "f" * 64))
            assert cur.rowcount == 0
    assert sql(pg_url, "SELECT count(*) FROM audit")[0][0] == 6
    assert sql(pg_url, "SELECT hash FROM audit_head WHERE chain = 'a'")[0][0] == head
    intact(pg_url, {"a": 3, "b": 3})


async def test_a_statement_that_fails_leaves_nothing(pg_url: str) -> None:
    log = await AuditLog(pg_url, chain="a").open()  # type: ignore[arg-type]
    try:
        await log.write(entry(0))
        head = await log.committed_head()
        # chained onto the head, moved by the trigger, then refused by the table (NOT NULL): all undone
        with pytest.raises(StorageError):
            await log.write(entry(1, tool=None), alone=True)
        assert await log.committed_head() == head
        # the same among rows written together: the failing one alone is refused, the others are kept
        results = await asyncio.gather(
            *(log.write(entry(i, tool=None if i == 5 else "t")) for i in range(2, 9)), return_exceptions=True)
        assert sum(isinstance(r, StorageError) for r in results) == 1, results
        await log.write(entry(9))
    finally:
        await log.close()
    columns = "chain, ts, decision_id, event, session, origin, tool, decision, outcome, prev_hash, hash"
    head = sql(pg_url, "SELECT hash FROM audit_head")[0][0]
    with psycopg.connect(pg_url) as conn:  # a list whose second row fails: its first row is not kept either
        with pytest.raises(psycopg.errors.NotNullViolation):
            conn.execute(
                f"INSERT INTO audit ({columns}) SELECT * FROM (VALUES ('a', 1.0, 'd', 'decision', 's', 'o', "
                "'t', 'allow', 'ok', %s, %s), ('a', 2.0, 'd', 'decision', 's', 'o', NULL, 'allow', 'ok', %s, "
                "%s)) AS v",
                (head, "e" * 64, "e" * 64, "f" * 64))
    intact(pg_url, {"a": 8})


_OLD_ADVANCE = "UPDATE audit_head SET hash = %s, rows = rows + 1 WHERE chain = %s AND hash = %s"
_OLD_INSERT = (f"INSERT INTO audit ({', '.join(HASHED)}, prev_hash, hash) SELECT "
               + ", ".join(["%s"] * len(HASHED))
               + ", %s, h.hash FROM audit_head h WHERE h.chain = %s AND h.hash = %s")


def write_the_old_way(url: str, log: AuditLog, e: AuditEntry) -> None:
    """A row as a Sentinel from before the trigger wrote it: the head moved by its own UPDATE, then it."""
    values = log.row(e)
    with psycopg.connect(url) as conn:
        prev = conn.execute("SELECT hash FROM audit_head WHERE chain = %s", (log.chain,)).fetchone()[0]
        new = chain_hash(prev, canonical(values))
        conn.execute(_OLD_ADVANCE, (new, log.chain, prev))
        assert conn.execute(_OLD_INSERT, (*values, prev, log.chain, new)).rowcount == 1


async def test_an_older_replicas_row_changes_nothing(pg_url: str) -> None:
    log = await AuditLog(pg_url, chain="a").open()  # type: ignore[arg-type]
    try:
        await log.write(entry(0))
        head = await log.committed_head()
        with pytest.raises(psycopg.errors.IntegrityConstraintViolation):  # never a head past a skipped row
            write_the_old_way(pg_url, log, entry(1))
        assert await log.committed_head() == head
        log._head = None  # it chains onto what is stored
        await log.write(entry(2))
    finally:
        await log.close()
    intact(pg_url, {"a": 2})


async def test_a_record_from_before_the_trigger_is_migrated_and_its_chain_goes_on(pg_url: str) -> None:
    log = await AuditLog(pg_url, chain="a").open()  # type: ignore[arg-type]
    for i in range(5):
        await log.write(entry(i))
    await log.close()
    # as schema version 1 left it: no trigger, each row's head moved by its own statement
    sql(pg_url, "DROP TRIGGER audit_advance ON audit")
    sql(pg_url, "DROP FUNCTION audit_advance()")
    sql(pg_url, "UPDATE storage_schema SET version = 1 WHERE store = 'audit'")
    for i in range(5, 8):
        write_the_old_way(pg_url, log, entry(i))
    intact(pg_url, {"a": 8})
    log = await AuditLog(pg_url, chain="a").open()  # type: ignore[arg-type]
    try:
        await asyncio.gather(*(log.write(entry(i)) for i in range(8, 28)))
        await log.write(entry(28), alone=True)
    finally:
        await log.close()
    intact(pg_url, {"a": 29})
    # migrated to the newest version (the trigger, then the rows' seal: ``audit_schema.SCHEMA``)
    newest = SCHEMA.version("postgres")
    assert sql(pg_url, "SELECT version FROM storage_schema WHERE store = 'audit'") == [(newest,)]
    triggers = sql(pg_url, "SELECT tgname FROM pg_trigger WHERE tgrelid = 'audit'::regclass "
                           "AND tgname <> 'sentinel_schema_guard'")  # every table's: server_schema.py
    assert triggers == [("audit_advance",)]


_REPLICA = """
import asyncio, sys
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.storage import StorageError
async def main(url, name):
    log = await AuditLog(url, chain="shared").open()
    done = failed = 0
    async def one(i):
        nonlocal done, failed
        try:
            e = AuditEntry(session=name, tool="t", decision="allow", outcome="ok", arguments={"i": i})
            await log.write(e, alone=i % 3 == 0)
            done += 1
        except StorageError:
            failed += 1  # refused (the head kept moving under it): the call would fail closed
    for round_ in range(10):
        await asyncio.gather(*(one(round_ * 4 + k) for k in range(4)))
    await log.close()
    print(done, failed, flush=True)
asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def test_replicas_racing_on_one_chain_keep_one_chain(pg_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _REPLICA, pg_url, f"r{n}"], stdout=subprocess.PIPE,
                              text=True, env=env) for n in range(3)]
    done = 0
    for p in procs:
        out, _ = p.communicate(timeout=150)
        assert p.returncode == 0, out
        ok, failed = map(int, out.split())
        assert ok + failed == 40
        done += ok
    assert done > 0
    # every write that returned is in the one chain, and nothing else is
    intact(pg_url, {"shared": done})
    assert sql(pg_url, "SELECT count(*) FROM audit")[0][0] == done


@pytest.mark.parametrize("told", [True, False])
async def test_a_connection_the_server_ended_while_idle_is_not_written_on(
        pg_url: str, monkeypatch: pytest.MonkeyPatch, told: bool) -> None:
    """A row alone is sent once and never re-sent (it may have committed): a connection the server ended while
    it was idle (a restart, a terminated backend) is found before anything is sent on it, so the first row
    after is written, not refused. Without that look (``told`` False) the row is refused: the look is what
    keeps it."""
    import sentinel_mcp.storage.postgres as postgres

    if not told:
        monkeypatch.setattr(postgres, "heard", lambda conn: "quiet")
    log = await AuditLog(pg_url, chain="a").open()  # type: ignore[arg-type]
    try:
        await log.write(entry(0), alone=True)
        writer = log.db._conn.info.backend_pid
        assert sql(pg_url, "SELECT pg_terminate_backend(%s)", writer) == [(True,)]
        for _ in range(100):  # until the backend is gone
            if not sql(pg_url, "SELECT 1 FROM pg_stat_activity WHERE pid = %s", writer):
                break
            await asyncio.sleep(0.05)
        if told:
            await log.write(entry(1), alone=True)
        else:
            with pytest.raises(StorageError):
                await log.write(entry(1), alone=True)
        await log.write(entry(2), alone=True)
    finally:
        await log.close()
    intact(pg_url, {"a": 3 if told else 2})
