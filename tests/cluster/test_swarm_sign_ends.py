"""Builds ended without a signed end (before ``end_mac`` existed, or ended in SQL) are never swept on a
server store, so their workspaces were kept forever, said nowhere. Now every sweep says how many of
this replica's workspaces are kept for that and names the command, and ``sentinel-mcp swarm sign-ends`` lists
them (a dry run: id, principal, state, when, why) and, with ``--yes``, signs the ends the operator vouches
for, each conditional on the row as listed; the sweeps then act on them. Never a build another cluster's key
made, and never one whose row changed since it was listed. Real PostgreSQL, the real CLI."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sentinel_mcp.swarm.retention import DAY, sweep
from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore

from tests.support.cli_in_process import run_main

pytestmark = pytest.mark.timeout(120)
SEAL = "swarm-sign-ends-seal-key-0123456789abcdef"
OLD, LIVE = "t20261205-060000-0a0a0a", "t20261205-060001-0b0b0b"


def swarm_key() -> bytes:
    from sentinel_mcp.gateway.replica import SharedStore

    return SharedStore("", "", "", SEAL.encode()).key("swarm build") or b""


def sql(url: str, text: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(text, params)
        return cur.fetchall() if cur.description else []


async def builds(url: str, root: Path) -> dict[str, Path]:
    out = {}
    async with SwarmStore(url, key=swarm_key()) as store:
        for tid, who in ((OLD, "bob"), (LIVE, "carol")):
            ws = root / tid
            (ws / "src").mkdir(parents=True)
            (ws / "src" / "app.py").write_text(f"print('{who}')\n")
            assert await store.create_task(tid, {"app_name": who}, ws, principal=who,
                                           lease=("replica-a", "replica-a/x", 600.0))
            out[tid] = ws
        await store.set_state(OLD, "FAILED", error="the model gave up")
        await store.set_state(LIVE, "COMPLETED")
    # OLD ended before ends were signed
    sql(url, "UPDATE tasks SET end_mac = NULL WHERE task_id = %s", (OLD,))
    return out


async def swept(url: str, root: Path) -> Any:
    async with SwarmStore(url, key=swarm_key()) as store:
        return await sweep(root, store, SwarmSettings(), now=time.time() + 8 * DAY)


async def cli(tmp: Path, url: str, *args: str) -> Any:
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp / "data"), "store": url, "builtins": [],
        "cluster": {"replica": "cli", "seal_key": SEAL}}}))
    return await asyncio.to_thread(run_main, ["-c", str(cfg), "swarm", "sign-ends", *args])


async def test_unsigned_ends_are_said_listed_and_signed_when_vouched_for(pg_url: str, tmp_path: Path) -> None:
    ws = await builds(pg_url, tmp_path / "ws")
    report = await swept(pg_url, tmp_path / "ws")
    assert report.workspaces == [] and ws[OLD].is_dir()
    assert any("without a signed end" in s and "sentinel-mcp swarm sign-ends" in s for s in report.skipped), \
        report.skipped
    dry = await cli(tmp_path, pg_url)
    assert dry.returncode == 0 and OLD in dry.stdout and LIVE not in dry.stdout, dry.stdout + dry.stderr
    assert "bob" in dry.stdout and "the model gave up" in dry.stdout and "--yes" in dry.stdout
    assert sql(pg_url, "SELECT end_mac FROM tasks WHERE task_id = %s", (OLD,)) == [(None,)]  # dry: nothing
    done = await cli(tmp_path, pg_url, "--yes")
    assert done.returncode == 0 and "signed 1" in done.stdout, done.stdout + done.stderr
    assert (await swept(pg_url, tmp_path / "ws")).workspaces == [OLD] and not ws[OLD].exists()
    assert ws[LIVE].is_dir()
    again = await cli(tmp_path, pg_url)
    assert again.returncode == 0 and OLD not in again.stdout, again.stdout


async def test_rows_another_key_made_are_never_listed_nor_signed(pg_url: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws" / OLD
    ws.mkdir(parents=True)
    async with SwarmStore(pg_url, key=b"x" * 32) as other:  # another cluster's key (or rows planted in SQL)
        assert await other.create_task(OLD, {"app_name": "x"}, ws, principal="bob",
                                       lease=("replica-a", "replica-a/x", 600.0))
    sql(pg_url, "UPDATE tasks SET state = 'FAILED', finished_at = 1000")
    run = await cli(tmp_path, pg_url, "--yes")
    assert run.returncode == 0 and OLD not in run.stdout and "signed 0" in run.stdout, run.stdout
    assert sql(pg_url, "SELECT end_mac FROM tasks") == [(None,)]


async def test_a_row_changed_since_it_was_listed_is_not_signed(pg_url: str, tmp_path: Path) -> None:
    await builds(pg_url, tmp_path / "ws")
    async with SwarmStore(pg_url, key=swarm_key()) as store:
        listed = await store.ends_unsigned()
        assert [r["task_id"] for r in listed] == [OLD]
        sql(pg_url, "UPDATE tasks SET finished_at = finished_at - 30 * 86400 WHERE task_id = %s", (OLD,))
        assert await store.sign_end(listed[0]) is False
    assert sql(pg_url, "SELECT end_mac FROM tasks WHERE task_id = %s", (OLD,)) == [(None,)]


async def test_an_embedded_store_has_no_ends_to_sign(tmp_path: Path) -> None:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path / "data"),
                                                              "builtins": []}}))
    run = await asyncio.to_thread(run_main, ["-c", str(cfg), "swarm", "sign-ends"])
    assert run.returncode == 2 and "server store" in run.stderr and "Traceback" not in run.stderr, run.stderr
