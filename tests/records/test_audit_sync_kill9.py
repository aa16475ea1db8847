"""``sentinel.audit.sync``: under "process" (WAL, ``synchronous=NORMAL``: no fsync a commit) as under "full",
a gateway killed with SIGKILL right after answering its calls has every answered call's rows, and the chain
verifies; the mode is said in /healthz, the start-up banner and ``audit verify``'s report."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.gateway.call_record import META_KEY

from .rig import AUTH, audit_rows, health, kill_tree, start_http, write_config

CALLS = 25  # answered one after another, then the gateway is killed at once


async def _answered(port: int, calls: int) -> list[str]:
    ids: list[str] = []
    async with httpx2.AsyncClient(timeout=30, headers=AUTH) as http, \
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
        for i in range(calls):
            result = await c.call_tool("rec__do", {"mark": f"m{i}"})
            assert not result.is_error, result.content[0].text
            ids.append(result.meta[META_KEY])
    return ids


@pytest.mark.parametrize("sync", ["full", "process"])
async def test_a_gateway_killed_right_after_answering_keeps_every_answered_row(
    tmp_path: Path, sync: str
) -> None:
    config = write_config(tmp_path, audit_sync=sync)
    proc, port = await asyncio.to_thread(start_http, config)
    try:
        shown = await asyncio.to_thread(health, port)
        assert shown["storage"]["audit"]["sync"] == sync, shown["storage"]
        answered = await _answered(port, CALLS)
        os.kill(proc.pid, signal.SIGKILL)  # the last answer just read: its outcome row must be kept
        proc.wait(timeout=30)
        banner = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        kill_tree(proc)
    assert f'sentinel.audit.sync = "{sync}"' in banner, banner

    rows = audit_rows(tmp_path / "data" / "sentinel.db")
    outcomes = {r["decision_id"] for r in rows if r["event"] == "outcome" and r["outcome"] == "ok"}
    decided = {r["decision_id"] for r in rows if r["event"] == "decision" and r["tool"] == "rec__do"}
    assert len(answered) == CALLS
    assert [d for d in answered if d not in outcomes] == []
    assert [d for d in answered if d not in decided] == []

    verify = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "audit", "verify"],
                            capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and "chain intact" in verify.stdout, verify.stdout + verify.stderr
    assert f'sentinel.audit.sync = "{sync}"' in verify.stdout, verify.stdout
    as_json = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "audit", "verify",
                              "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(as_json.stdout)["sync"] == sync, as_json.stdout


@pytest.mark.parametrize("sync, pragma", [("full", 2), ("process", 1)])
async def test_the_audit_stores_connection_commits_with_the_chosen_synchronous(
    tmp_path: Path, sync: str, pragma: int
) -> None:
    """What the mode means at SQLite (2 = FULL: an fsync a commit; 1 = NORMAL in WAL mode: none), read back
    from the connection the audit writes through."""
    from sentinel_mcp.gateway.audit import AuditLog

    log = await AuditLog(tmp_path / "a.db", sync=sync).open()
    try:
        assert await log.db.query("PRAGMA synchronous") == [(pragma,)]
        assert await log.db.query("PRAGMA journal_mode") == [("wal",)]
        assert log.health.as_dict()["sync"] == sync
    finally:
        await log.close()


@pytest.mark.parametrize("sync", ["full", "process"])
def test_over_stdio_a_weaker_record_is_said_at_start(tmp_path: Path, sync: str) -> None:
    """stdio prints nothing at start but problems (a host such as Claude Desktop logs it); "process" is said
    there too, so a gateway run over stdio is not mistaken for one with the default."""
    config = write_config(tmp_path, audit_sync=sync)
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve"],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    said = 'sentinel.audit.sync = "process"' in run.stderr
    assert said == (sync == "process"), run.stderr[-2000:]
