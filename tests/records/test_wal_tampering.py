"""The write-ahead log of a running gateway's audit removed, truncated or replaced under it (a clean-up
script, a sync tool, an intruder): SQLite keeps writing to the file it holds open, so every later call was
answered as allowed with its rows in a file no restart reads, and after ``kill -9`` the whole log was gone
(even its tables: they had never left the write-ahead log). Now the gateway notices before its next commit,
refuses that call (nothing forwarded), folds what it still holds into the database file when it can, and
serves again on a fresh log: no call answered ok is missing its outcome row after ``kill -9``, and no call
that ran is missing its decision row."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.gateway.call_record import META_KEY

from .rig import AUTH, audit_rows, executed, instance_audit_file, kill_tree, start_http, write_config

pytestmark = pytest.mark.timeout(120)


def tamper(wal: Path, how: str) -> None:
    if how == "removed":
        wal.unlink()
    elif how == "truncated":
        os.truncate(wal, 0)
    elif how == "replaced":
        wal.unlink()
        wal.write_bytes(b"")
    elif how == "symlinked":
        wal.unlink()
        os.symlink(wal.with_name("elsewhere"), wal)


@pytest.mark.parametrize("how", ["removed", "truncated", "replaced", "symlinked"])
async def test_a_write_ahead_log_tampered_with_never_takes_an_answered_calls_rows(
    tmp_path: Path, how: str
) -> None:
    config = write_config(tmp_path)
    proc, port = await asyncio.to_thread(start_http, config)
    answered: dict[str, str] = {}  # mark -> decision id of every call answered ok
    refused: list[str] = []
    try:
        async with httpx2.AsyncClient(timeout=30, headers=AUTH) as http, \
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:

            async def call(mark: str) -> None:
                r = await c.call_tool("rec__do", {"mark": mark})
                if r.is_error:
                    refused.append(mark)
                    assert "record" in r.content[0].text, r.content[0].text
                else:
                    answered[mark] = r.meta[META_KEY]

            for i in range(3):
                await call(f"before-{i}")
            wal = Path(f"{instance_audit_file(tmp_path / 'data' / 'sentinel.db')}-wal")
            assert wal.stat().st_size > 0
            tamper(wal, how)
            for i in range(6):
                await call(f"after-{i}")
        assert refused, "the tampering went unnoticed"
        assert any(m.startswith("after-") for m in answered), "the gateway did not serve again"
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 10)
    finally:
        kill_tree(proc)
    rows = audit_rows(tmp_path / "data" / "sentinel.db")
    outcomes = {r["decision_id"] for r in rows if r["event"] == "outcome" and r["outcome"] == "ok"}
    decided = {r["decision_id"] for r in rows if r["event"] == "decision"}
    after = {m: d for m, d in answered.items() if m.startswith("after-")}
    assert [m for m, d in after.items() if d not in outcomes or d not in decided] == []
    assert set(executed(tmp_path)) <= set(answered) | set(refused)
    assert not set(refused) & set(executed(tmp_path))  # a refused call never ran
    if how != "truncated":  # the file it held is still whole: what it had committed is kept too
        assert [m for m, d in answered.items() if d not in outcomes] == []
