"""kill -9 of a gateway under concurrent MCP and A2A clients, again and again: nothing answered or run is
missing from the record, and no task reported COMPLETED is lost."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.gateway.call_record import META_KEY

from .rig import AUTH, audit_rows, executed, kill_tree, start_http, tree, wait_gone, write_config

ROUNDS = 4
MCP_CLIENTS = 4
A2A_CLIENTS = 2
A2A_HEADERS = {"A2A-Version": "1.0", **AUTH}


def a2a_body(token: str) -> dict:
    part = {"data": {"type": "tool_call", "tool_call_id": token, "name": "rec__do", "args": {"mark": token}}}
    return {"jsonrpc": "2.0", "id": token, "method": "SendMessage", "params": {"message": {
        "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [part]}}}


async def mcp_worker(port: int, name: str, answered: dict[str, str]) -> None:
    try:
        async with httpx2.AsyncClient(timeout=30, headers=AUTH) as http, \
                Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
            for i in range(10_000):
                token = f"{name}-{i}"
                result = await c.call_tool("rec__do", {"mark": token})
                assert not result.is_error, result.content[0].text
                answered[token] = result.meta[META_KEY]
    except Exception:  # noqa: BLE001 - the gateway was killed under us: that is the point
        return


async def a2a_worker(port: int, name: str, completed: list[str]) -> None:
    try:
        async with httpx2.AsyncClient(timeout=30, headers=A2A_HEADERS) as http:
            for i in range(10_000):
                r = await http.post(f"http://127.0.0.1:{port}/a2a", json=a2a_body(f"{name}-{i}"))
                task = r.json()["result"]["task"]
                assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
                completed.append(task["id"])
    except Exception:  # noqa: BLE001
        return


async def still_completed(port: int, task_ids: list[str]) -> list[str]:
    lost = []
    async with httpx2.AsyncClient(timeout=30, headers=A2A_HEADERS) as http:
        for tid in task_ids:
            r = await http.post(f"http://127.0.0.1:{port}/a2a",
                                json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": tid}})
            state = (r.json().get("result") or {}).get("status", {}).get("state")
            if state != "TASK_STATE_COMPLETED":
                lost.append(tid)
    return lost


async def test_kill_9_loses_no_record_and_no_completed_task(tmp_path: Path) -> None:
    config = write_config(tmp_path, grandchild=True)
    rng = random.Random(13)
    answered: dict[str, str] = {}
    completed: list[str] = []
    for round_ in range(ROUNDS):
        proc, port = await asyncio.to_thread(start_http, config)
        try:
            lost = await still_completed(port, completed)  # survived every kill so far
            assert lost == [], f"round {round_}: {len(lost)} COMPLETED task(s) lost"
            workers = [
                asyncio.create_task(mcp_worker(port, f"r{round_}m{i}", answered)) for i in range(MCP_CLIENTS)
            ]
            workers += [
                asyncio.create_task(a2a_worker(port, f"r{round_}a{i}", completed)) for i in range(A2A_CLIENTS)
            ]
            start = (len(answered), len(completed))
            for _ in range(400):  # under load first (bounded), then kill at a random moment
                if len(answered) >= start[0] + 8 and len(completed) >= start[1] + 2:
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(rng.random() * 0.8)
            family = tree(proc.pid)
            assert len(family) >= 3  # gateway, the upstream's reaper and server (and its grandchild)
            os.kill(proc.pid, signal.SIGKILL)
            await asyncio.wait(workers, timeout=30)
            # the upstream noticed its parent is gone: nothing of the gateway's tree is left
            left = await asyncio.to_thread(wait_gone, family - {proc.pid})
            assert left == set(), f"round {round_}: orphans left: {left}"
        finally:
            kill_tree(proc)
    proc, port = await asyncio.to_thread(start_http, config)
    try:
        assert await still_completed(port, completed) == []
    finally:
        kill_tree(proc)

    rows = audit_rows(tmp_path / "data" / "sentinel.db")
    outcomes = {r["decision_id"] for r in rows if r["event"] == "outcome" and r["outcome"] == "ok"}
    decided = {
        json.loads(r["arguments"])["mark"]
        for r in rows
        if r["event"] == "decision" and r["tool"] == "rec__do"
    }
    ran = executed(tmp_path)
    assert answered and completed and ran
    # zero answered calls without their outcome row; zero executed calls without a decision row
    assert [t for t, d in answered.items() if d not in outcomes] == []
    assert [t for t in ran if t not in decided] == []
    print(
        f"kill -9 x{ROUNDS}: {len(answered)} MCP calls answered, {len(completed)} A2A tasks COMPLETED, "
        f"{len(ran)} executed upstream, {len(rows)} audit rows"
    )
    verify = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "audit", "verify"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
