"""The disk fills up while eight clients call at once (a real gateway under ``RLIMIT_FSIZE``, which makes a
write past the limit fail with EFBIG as a full disk fails with ENOSPC; no mount needed): no call is answered
as done without its rows, none that was refused ran (except those told that they ran and their result is
withheld), and the cause says the disk is full, at a commit as at an open (it said "disk I/O error")."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.gateway.call_record import META_KEY
from tests.conftest import free_port, wait_http

from .rig import AUTH, ROOT, audit_rows, executed, health, kill_tree, wait_ready, write_config

pytestmark = pytest.mark.timeout(120)

LIMIT = 400_000  # bytes per file: the write-ahead log cannot be pre-sized and fills after a few dozen commits
CLIENTS, CALLS = 8, 40


def start_limited(config: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "serve", "--http", str(port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
        start_new_session=True, preexec_fn=limit,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        wait_ready(port)
    except BaseException:
        kill_tree(proc)
        raise
    return proc, port


async def client(port: int, name: str, answered: dict[str, str], refused: dict[str, str]) -> None:
    async with httpx2.AsyncClient(timeout=30, headers=AUTH) as http, \
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
        for i in range(CALLS):
            mark = f"{name}-{i}"
            r = await c.call_tool("rec__do", {"mark": mark})
            if r.is_error:
                refused[mark] = r.content[0].text
            else:
                answered[mark] = r.meta[META_KEY]


async def test_a_disk_that_fills_under_concurrent_calls_answers_none_without_its_rows(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    proc, port = await asyncio.to_thread(start_limited, config)
    answered: dict[str, str] = {}
    refused: dict[str, str] = {}
    try:
        await asyncio.gather(*(client(port, f"c{i}", answered, refused) for i in range(CLIENTS)))
        status = await asyncio.to_thread(health, port)
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 10)
    finally:
        kill_tree(proc)
    assert answered and refused, (len(answered), len(refused))  # the disk filled in the middle
    assert status["status"] == "degraded"
    assert "disk is full or the file may not grow" in status["storage"]["audit"]["cause"], status
    rows = audit_rows(tmp_path / "data" / "sentinel.db")
    outcomes = {r["decision_id"] for r in rows if r["event"] == "outcome" and r["outcome"] == "ok"}
    decided = {json.loads(r["arguments"])["mark"] for r in rows if r["event"] == "decision"}
    ran = set(executed(tmp_path))
    assert [m for m, d in answered.items() if d not in outcomes] == []
    assert sorted(ran - decided) == []
    told_it_ran = {m for m, t in refused.items() if "ran, but Sentinel could not record its outcome" in t}
    assert sorted((set(refused) & ran) - told_it_ran) == []
    assert all("record" in text for text in refused.values())
