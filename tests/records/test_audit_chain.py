"""The audit log: decision before forwarding, outcome before the answer, a verifiable hash chain."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from mcp import Client

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, read_audit, redact_entry
from sentinel_mcp.gateway.audit_chain import ChainReport, verify_file
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.app.runtime import running_gateway

from .rig import audit_rows, executed, recorder_config


def verify(tmp: Path, store: Path, *, anchored: bool = True) -> subprocess.CompletedProcess:
    """``anchored=False``: a log written without a gateway (no anchor), checked by its chain alone."""
    cfg = tmp / "verify.json"
    settings: dict = {"store": str(store), "builtins": []}
    if not anchored:
        settings["audit_anchor"] = False
    cfg.write_text(json.dumps({"sentinel": settings}))
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", "verify"],
                          capture_output=True, text=True, timeout=60)


async def test_each_call_has_its_decision_before_and_outcome_after(tmp_path: Path) -> None:
    config = recorder_config(tmp_path)
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            ok = await c.call_tool("rec__do", {"mark": "t1"})
            refused = await c.call_tool("rec__do", {"mark": 7})  # wrong type: refused, never forwarded
            unknown = await c.call_tool("rec__nope", {})
    assert not ok.is_error and refused.is_error and unknown.is_error
    rows = audit_rows(config.store_path)
    by_call: dict[str, list[dict]] = {}
    for r in rows:
        by_call.setdefault(r["decision_id"], []).append(r)
    allowed = by_call[ok.meta[META_KEY]]
    assert [(r["event"], r["outcome"]) for r in allowed] == [("decision", "forwarded"), ("outcome", "ok")]
    assert allowed[0]["id"] < allowed[1]["id"] and json.loads(allowed[0]["arguments"]) == {"mark": "t1"}
    assert [(r["event"], r["outcome"]) for r in by_call[refused.meta[META_KEY]]] == [
        ("final", "bad_arguments")
    ]
    assert [(r["event"], r["outcome"]) for r in by_call[unknown.meta[META_KEY]]] == [
        ("final", "unknown_tool")
    ]
    assert executed(tmp_path) == ["t1"]
    assert verify(tmp_path, config.store_path).returncode == 0


async def test_verify_finds_the_first_altered_removed_or_truncated_row(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    for i in range(12):
        await log.write(
            AuditEntry(session="s", tool=f"t{i}", decision="allow", outcome="ok", arguments={"i": i})
        )
    await log.close()
    good = verify(tmp_path, store, anchored=False)
    assert good.returncode == 0 and "12 rows" in good.stdout and "intact" in good.stdout

    def tamper(sql: str) -> ChainReport:
        conn = sqlite3.connect(store)
        for one in sql.split("; "):
            conn.execute(one)
        conn.commit()
        conn.close()
        return verify_file(store)

    altered = tamper("UPDATE audit SET decision = 'deny' WHERE id = 5")
    assert altered.broken_row == 5 and "altered" in str(altered.problem)
    cli = verify(tmp_path, store, anchored=False)  # as a user sees it
    assert cli.returncode == 1 and "first broken row: 5" in cli.stdout
    assert tamper("UPDATE audit SET decision = 'allow' WHERE id = 5").ok  # put back as it was: intact again
    removed = tamper("DELETE FROM audit WHERE id = 8")
    assert removed.broken_row == 9 and "deleted or changed" in str(removed.problem)
    columns = (
        "chain, ts, decision_id, event, session, client, origin, tool, upstream, arg_digest, arguments, "
        "decision, reason, proof, policy_version, latency_ms, outcome, error, principal, prev_hash, hash"
    )
    forged = f"INSERT INTO audit (id, {columns}) SELECT 8, {columns} FROM audit WHERE id = 3"
    # a row not chained onto the head is not inserted at all (the schema's trigger: SQLite moves the head with
    # each row it inserts); one who can write the file can drop the trigger, and verify still finds the row
    assert tamper(forged).broken_row == 9
    inserted = tamper(f"DROP TRIGGER audit_advance; {forged}")
    assert inserted.broken_row == 8
    truncated = tamper("DELETE FROM audit WHERE id >= 8")
    assert truncated.broken_row is None and "rows at its end were deleted" in str(truncated.problem)


async def test_an_unchained_log_from_before_is_kept_aside(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    conn = sqlite3.connect(store)
    conn.execute(
        "CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL, session TEXT NOT NULL,"
        " tool TEXT NOT NULL, decision TEXT NOT NULL, outcome TEXT NOT NULL)"
    )
    conn.execute(
        "INSERT INTO audit (ts, session, tool, decision, outcome) VALUES (1, 's', 'old', 'allow', 'ok')"
    )
    conn.commit()
    conn.close()
    log = await AuditLog(store).open()
    await log.write(AuditEntry(session="s", tool="new", decision="allow", outcome="ok"))
    await log.close()
    conn = sqlite3.connect(store)
    assert conn.execute("SELECT tool FROM audit_unchained").fetchall() == [("old",)]
    conn.close()
    assert verify_file(store).ok


async def test_the_principal_is_chained_and_every_row_is_redacted_once(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    redacted: list[str] = []

    def counting(entry: AuditEntry) -> AuditEntry:
        redacted.append(entry.event)
        return redact_entry(entry)

    log = await AuditLog(store, redactor=counting).open()
    secret = {"text": "hunter2-typed", "password": "pw-0123456", "to": "ann"}
    for event, outcome in (("decision", "forwarded"), ("outcome", "ok")):
        await log.write(
            AuditEntry(
                session="alice/c1",
                principal="alice",
                tool="dev__type_text",
                decision="allow",
                outcome=outcome,
                event=event,
                decision_id="d1",
                arguments=secret,
                sensitive=frozenset({"text"}),
                reason="typed hunter2-typed for ann",
                proof={"tree": [["typed", "pw-0123456"]]},
            )
        )
    await log.write(
        AuditEntry(session="bob/c1", principal="bob", tool="t", decision="deny", outcome="denied")
    )
    await log.close()
    assert redacted == ["decision", "outcome", "final"]  # each row once, refused answers included
    conn = sqlite3.connect(store)
    rows = conn.execute("SELECT principal, arguments, reason, proof FROM audit ORDER BY id").fetchall()
    conn.close()
    assert [r[0] for r in rows] == ["alice", "alice", "bob"]
    assert "hunter2" not in repr(rows) and "pw-0123456" not in repr(rows) and "ann" in rows[0][1]
    assert verify_file(store).ok
    assert {r["principal"] for r in await read_audit(store, principal="alice")} == {"alice"}
    assert [r["tool"] for r in await read_audit(store, principal="bob")] == ["t"]
    conn = sqlite3.connect(store)  # a row moved to another principal breaks the chain
    conn.execute("UPDATE audit SET principal = 'bob' WHERE id = 1")
    conn.commit()
    conn.close()
    report = verify_file(store)
    assert report.broken_row == 1 and "altered" in str(report.problem)


async def test_a_chained_log_from_before_principals_still_verifies(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    for i in range(3):
        await log.write(AuditEntry(session="s", tool=f"t{i}", decision="allow", outcome="ok"))
    await log.close()
    conn = sqlite3.connect(store)  # as such a log was: no principal column, audit schema version 1
    conn.execute("ALTER TABLE audit DROP COLUMN principal")
    conn.execute("UPDATE storage_schema SET version = 1 WHERE store = 'audit'")
    conn.commit()
    conn.close()
    log = await AuditLog(store).open()
    await log.write(AuditEntry(session="s", principal="owner", tool="t3", decision="allow", outcome="ok"))
    await log.close()
    report = verify_file(store)
    assert report.ok and report.rows == 4, report
    assert [r["tool"] for r in await read_audit(store, principal="owner")] == ["t3"]


async def test_the_latency_split_is_chained_and_logs_from_before_it_still_verify(tmp_path: Path) -> None:
    store = tmp_path / "sentinel.db"
    log = await AuditLog(store).open()
    await log.write(AuditEntry(session="s", principal="owner", tool="old1", decision="allow", outcome="ok"))
    await log.write(AuditEntry(session="s", tool="old2", decision="allow", outcome="ok"))
    await log.close()
    conn = sqlite3.connect(store)  # as such a log was: no timings column, audit schema version 2
    conn.execute("ALTER TABLE audit DROP COLUMN timings")
    conn.execute("UPDATE storage_schema SET version = 2 WHERE store = 'audit'")
    conn.commit()
    conn.close()
    log = await AuditLog(store).open()
    split = {"guard": 1.5, "fetch": 0.25, "ask": 0.0, "forward": 12.0}
    await log.write(
        AuditEntry(session="s", principal="owner", tool="new", decision="allow", outcome="ok", timings=split)
    )
    await log.write(AuditEntry(session="s", tool="new2", decision="allow", outcome="ok", timings=split))
    await log.close()
    report = verify_file(store)
    assert report.ok and report.rows == 4, report
    [row] = [r for r in await read_audit(store, principal="owner") if r["tool"] == "new"]
    assert json.loads(row["timings"]) == split
    for sql in (
        "UPDATE audit SET timings = '{\"guard\": 0.1}' WHERE id = 3",  # a timing changed
        "UPDATE audit SET timings = NULL WHERE id = 3",  # or removed
        "UPDATE audit SET timings = '{}' WHERE id = 1",
    ):  # or added to an old row
        copy = tmp_path / "copy.db"
        copy.write_bytes(store.read_bytes())
        conn = sqlite3.connect(copy)
        conn.execute(sql)
        conn.commit()
        conn.close()
        assert not verify_file(copy).ok, sql


async def test_a_damaged_log_is_reported_broken_naming_the_file_never_a_traceback(tmp_path: Path) -> None:
    config = recorder_config(tmp_path)
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        for i in range(30):
            await c.call_tool("rec__do", {"mark": f"m{i}"})
    files = sorted((tmp_path / "data").rglob("*.db"))
    log = next(f for f in files if "audit_head" in {r[0] for r in sqlite3.connect(f).execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")})
    with sqlite3.connect(log) as db:  # a value of a type the log never writes
        db.execute("UPDATE audit SET tool = x'00ff' WHERE id = (SELECT max(id) FROM audit)")
    run = verify(tmp_path, config.store_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr and str(log) in run.stdout + run.stderr
    log.write_bytes(log.read_bytes()[: log.stat().st_size // 2])  # cut mid-table
    run = verify(tmp_path, config.store_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr and "BROKEN" in run.stdout + run.stderr
