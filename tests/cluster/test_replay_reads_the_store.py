"""``sentinel-mcp replay`` reads the record the gateway wrote: with a server store (``sentinel.store`` names a
PostgreSQL database) that is the cluster's audit table, not the data dir's SQLite files. Before, it read the
files (none, or an old embedded log) and said "Replayed 0 recorded call(s)" over a record of thousands, or
replayed calls that were not the cluster's. Each row's seal is checked as every reader checks it: a row
relabelled in SQL is nobody's, never replayed as a principal's. Real PostgreSQL, the real CLI."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import copy_shipped_rulebase
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.storage.row_signature import derived_key

from tests.support.cli_in_process import run_main

from .test_audit_rows_sealed import sql

pytestmark = pytest.mark.timeout(180)
SEAL = "replay-reads-the-store-seal-key-0123456789"
KEY = derived_key(SEAL.encode(), "audit")


def config(tmp: Path, store: str | None) -> Path:
    sentinel: dict[str, Any] = {"data_dir": str(tmp / "data"), "builtins": [], "audit_anchor": False,
                                "rulebases": ["shipped:rulebases/default.pl", "shipped:rulebases/airline.pl"],
                                "cluster": {"replica": "cli", "seal_key": SEAL}}
    if store is not None:
        sentinel["store"] = store
    path = tmp / "sentinel.json"
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}))
    return path


async def record(location: str, key: bytes, calls: list[tuple[str, str]]) -> None:
    log = await AuditLog(location, chain="replica-a", key=key).open()
    try:
        for principal, flight in calls:
            await log.write(AuditEntry(
                session=f"{principal}/c", principal=principal, origin="client",
                tool="airline__cancel_reservation", upstream="airline", decision="allow", outcome="ok",
                arguments={"reservation_id": flight}, arg_digest=f"digest-{flight}"))
    finally:
        await log.close()


async def cli(argv: list[str]) -> Any:
    """The CLI's main (which runs its own event loop) on a thread of its own."""
    return await asyncio.to_thread(run_main, argv)


def replayed(run: Any) -> int:
    found = re.search(r"Replayed (\d+) recorded call", run.stdout)
    assert found and "Traceback" not in run.stderr, run.stdout + run.stderr
    return int(found.group(1))


def candidate(tmp: Path) -> Path:
    (tmp / "mine").mkdir()
    return copy_shipped_rulebase("airline.pl", tmp / "mine" / "airline.pl")  # with the files it includes


async def test_replay_reads_the_server_store(pg_url: str, tmp_path: Path) -> None:
    await record(pg_url, KEY, [("alice", "UA1"), ("bob", "UA2")])
    # an old embedded log in the data dir: not what the gateway of this config wrote
    (tmp_path / "data").mkdir()
    await record(str(tmp_path / "data" / "sentinel.db"), KEY, [("mallory", f"X{i}") for i in range(5)])
    cand = candidate(tmp_path)
    run = await cli(["-c", str(config(tmp_path, pg_url)), "replay", "--rulebase", str(cand), "--all"])
    assert replayed(run) == 2, run.stdout
    assert "UA1" in run.stdout and "UA2" in run.stdout and "X0" not in run.stdout, run.stdout
    alice = await cli(["-c", str(config(tmp_path, pg_url)), "replay", "--rulebase", str(cand), "--all",
                      "--principal", "alice"])
    assert replayed(alice) == 1 and "UA1" in alice.stdout and "UA2" not in alice.stdout, alice.stdout


async def test_a_row_relabelled_in_sql_is_not_replayed_as_the_principals(pg_url: str, tmp_path: Path) -> None:
    await record(pg_url, KEY, [("alice", "UA1"), ("bob", "UA2")])
    sql(pg_url, "UPDATE audit SET principal = 'alice' WHERE principal = 'bob'")
    cand = candidate(tmp_path)
    alice = await cli(["-c", str(config(tmp_path, pg_url)), "replay", "--rulebase", str(cand), "--all",
                      "--principal", "alice"])
    assert replayed(alice) == 1 and "UA2" not in alice.stdout, alice.stdout


async def test_replay_reads_the_embedded_store_as_before(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    await record(str(tmp_path / "data" / "sentinel.db"), KEY, [("alice", "UA1")])
    cand = candidate(tmp_path)
    run = await cli(["-c", str(config(tmp_path, None)), "replay", "--rulebase", str(cand), "--all"])
    assert replayed(run) == 1 and "UA1" in run.stdout, run.stdout
