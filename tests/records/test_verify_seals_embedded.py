"""``audit verify`` on an embedded SQLite store with ``sentinel.cluster.seal_key`` set checks every row's seal
(MAC), as it does on PostgreSQL (``gateway/audit_chain.verify_rows``). Without it, a row relabelled to
another principal and re-chained (head too) by someone who can write the data dir, in the window after the
chain's last anchor or with the anchor off, verified intact while every reader listed the row as tampered.
Real SQLite, the real CLI; the edits are plain SQL, as that writer would write them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, audit_files
from sentinel_mcp.gateway.audit_chain import verify_store
from sentinel_mcp.gateway.audit_schema import HASHED
from sentinel_mcp.storage.row_signature import derived_key

from tests.support.cli_in_process import run_main

pytestmark = pytest.mark.timeout(120)
SEAL = "embedded-seal-key-for-tests-0123456789abcdef"
KEY = derived_key(SEAL.encode(), "audit")


def sql(db: Path, text: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(text, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def rechain(db: Path, chain: str) -> None:
    """Every row's prev_hash/hash and the head recomputed from what the rows now hold (plain sha256)."""
    from sentinel_mcp.gateway.audit import canonical, chain_hash
    from sentinel_mcp.gateway.audit_schema import GENESIS

    rows = sql(db, f"SELECT id, {', '.join(HASHED)} FROM audit WHERE chain = ? ORDER BY id", (chain,))
    prev = GENESIS
    for row in rows:
        new = chain_hash(prev, canonical(tuple(row[1:])))
        sql(db, "UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?", (prev, new, row[0]))
        prev = new
    sql(db, "UPDATE audit_head SET hash = ?, rows = ? WHERE chain = ?", (prev, len(rows), chain))


async def written(db: Path, key: bytes | None,
                  who: tuple[str, ...] = ("alice", "bob", "bob", "alice")) -> None:
    log = await AuditLog(str(db), chain="main", key=key).open()
    try:
        for p in who:
            await log.write(AuditEntry(session=f"{p}/c", principal=p, tool="t", decision="allow",
                                       outcome="ok"))
    finally:
        await log.close()


def cli_verify(tmp: Path, data: Path, *extra: str, seal: str | None = SEAL) -> Any:
    cfg = tmp / "verify.json"
    sentinel: dict[str, Any] = {"data_dir": str(data), "builtins": [], "audit_anchor": False}
    if seal is not None:
        sentinel["cluster"] = {"seal_key": seal}
    cfg.write_text(json.dumps({"sentinel": sentinel}))
    return run_main(["-c", str(cfg), "audit", "verify", *extra])


EDITS = [
    # bob's row relabelled alice's (her Activity page would list it, were it not for the seal)
    "UPDATE audit SET principal = 'alice' WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    # ...with the MAC of one of alice's own rows moved onto it
    "UPDATE audit SET principal = 'alice', mac = (SELECT MIN(mac) FROM audit WHERE principal = 'alice') "
    "WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    # the content changed, the principal kept
    "UPDATE audit SET tool = 'dev__type_text' WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    # the MAC wiped (after sealed rows: removed, not "from before the seal"), upper-cased, not hex
    "UPDATE audit SET mac = NULL WHERE id = (SELECT MAX(id) FROM audit)",
    "UPDATE audit SET mac = UPPER(mac) WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    "UPDATE audit SET mac = 'é' WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
    "UPDATE audit SET mac = 7 WHERE id = (SELECT MIN(id) FROM audit WHERE principal = 'bob')",
]


@pytest.mark.parametrize("edit", EDITS)
async def test_a_rechained_edit_is_broken_with_the_seal_key(tmp_path: Path, edit: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = data / "sentinel.db"
    await written(db, KEY)
    sql(db, edit)
    rechain(db, "main")
    # the chain alone passes it (what verify said before on SQLite)
    assert verify_store(db).ok
    report = verify_store(db, KEY)
    assert not report.ok and "seal (MAC)" in (report.problem or ""), report.problem
    run = cli_verify(tmp_path, data)
    out = run.stdout + run.stderr
    assert run.returncode == 1 and "BROKEN" in out and "seal (MAC)" in out and "Traceback" not in out, out
    as_json = json.loads(cli_verify(tmp_path, data, "--json").stdout)
    assert as_json["ok"] is False and as_json["broken_row"] is not None


async def test_an_intact_sealed_log_verifies_and_says_the_seals_were_checked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = data / "sentinel.db"
    await written(db, None, ("owner",))  # a row from before the key was set: unsigned, counted, not broken
    await written(db, KEY)
    report = verify_store(db, KEY)
    assert report.ok and report.rows == 5 and report.unsealed == 1, report.problem
    run = cli_verify(tmp_path, data)
    assert run.returncode == 0 and "seal" in run.stdout and "1 from before the seal" in run.stdout, run.stdout
    assert json.loads(cli_verify(tmp_path, data, "--json").stdout)["sealed_checked"] is True
    # without a key configured the seals are not checked, and verify says so
    run = cli_verify(tmp_path, data, seal=None)
    assert run.returncode == 0 and "seals not checked" in run.stdout, run.stdout


async def test_rows_sealed_with_another_key_are_broken(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = data / "sentinel.db"
    await written(db, derived_key(b"another-deployments-key-0123456789abcdef", "audit"))
    run = cli_verify(tmp_path, data)
    assert run.returncode == 1 and "seal (MAC)" in run.stdout, run.stdout


async def test_a_log_from_before_the_mac_column_verifies_as_unsigned(tmp_path: Path) -> None:
    """A file whose audit table has no ``mac`` column at all (made before the seal): every row unsigned, none
    broken for that, and no error reading it."""
    data = tmp_path / "data"
    data.mkdir()
    db = data / "sentinel.db"
    await written(db, None)
    sql(db, "ALTER TABLE audit DROP COLUMN mac")
    report = verify_store(db, KEY)
    assert report.ok and report.unsealed == 4, report.problem
    assert audit_files(db) == [db]


async def test_with_the_anchor_a_wiped_seal_is_broken(tmp_path: Path) -> None:
    """A real gateway (seal key set, anchor outside the data dir): its rows sealed and anchored. A MAC wiped
    changes nothing the chain or the anchor cover (the row's content is the same): only the seal check tells,
    and the row then reads as nobody's. Verify names it."""
    import sys

    from mcp import Client

    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.config import parse_config

    from .rig import RECORDER

    data, anchor = tmp_path / "data", tmp_path / "anchor"
    sentinel = {"data_dir": str(data), "builtins": [], "audit_anchor": str(anchor),
                "cluster": {"seal_key": SEAL}}
    config = parse_config(
        {"mcpServers": {"rec": {"command": sys.executable, "args": [RECORDER],
                                "env": {"RECORDER_LOG": str(tmp_path / "executed.log")}}},
         "sentinel": sentinel}, source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            for m in ("a", "b", "c"):
                assert not (await c.call_tool("rec__do", {"mark": m})).is_error
    cfg = tmp_path / "verify.json"
    cfg.write_text(json.dumps({"sentinel": sentinel}))
    run = run_main(["-c", str(cfg), "audit", "verify"])
    assert run.returncode == 0 and "anchored" in run.stdout and "seal checked" in run.stdout, run.stdout
    (file,) = audit_files(data / "sentinel.db")
    assert all(isinstance(m, str) for (m,) in sql(file, "SELECT mac FROM audit"))
    sql(file, "UPDATE audit SET mac = NULL WHERE id = (SELECT MAX(id) FROM audit)")
    run = run_main(["-c", str(cfg), "audit", "verify"])
    assert run.returncode == 1 and "BROKEN" in run.stdout and "was removed" in run.stdout, run.stdout
