"""The same containment as a user's gateway process shows it: `sentinel-mcp serve` over stdio and over HTTP
(MCP both eras, and an A2A `tool_call` on loopback): escape goals refused, nothing runs, the gateway and its
other sessions carry on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR

from ..conftest import free_port, stop_process, wait_http
from ..gateway.helpers import alive, descendants

pytestmark = pytest.mark.timeout(240)
TOKEN = "t-" + uuid.uuid4().hex


def write_config(tmp: Path) -> Path:
    cfg = {
        "mcpServers": {"airline": {"command": sys.executable, "args": ["-m", "examples.airline"],
                                   "cwd": str(PROJECT_ROOT)}},
        "sentinel": {"rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "airline.pl")],
                     "builtins": ["sentinel", "a2a"], "data_dir": str(tmp / "state"),
                     "seeds": {"current_user": "mia_li_3668"},
                     "http": {"token": TOKEN}},
    }
    path = tmp / "sentinel.json"
    path.write_text(json.dumps(cfg))
    return path


def attacks(marker: Path) -> list[str]:
    m = str(marker)
    return [f"call(shell, 'touch {m}')", f"findall(x, shell('touch {m}'), _)", f"G = shell('touch {m}'), G",
            f"user:shell('touch {m}')", f"catch(shell('touch {m}'), _, true)",
            "sentinel_core:cur(session, S), call(assertz, S:'$fact'(x, 1.0e18, user))", "op(700, xfx, =)",
            "between(1, 1000000000000000, _), fail"]


def body(result: Any) -> dict[str, Any]:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def run_attacks(c: Client, marker: Path) -> None:
    for goal in attacks(marker):
        r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
        assert r.is_error and body(r)["status"] in ("refused", "inference_limit", "time_limit", "error"), goal
    ok = await c.call_tool("sentinel__sentinel_query", {"goal": "X = 1"})
    assert body(ok)["status"] == "proved"
    assert not marker.exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio(tmp_path: Path, mode: str) -> None:
    cfg = write_config(tmp_path)
    marker = tmp_path / "pwned"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sentinel_mcp", "-c", str(cfg), "serve"],
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        cwd=str(tmp_path),
    )
    async with Client(stdio_client(params), mode=mode) as c:
        await run_attacks(c, marker)
        # guarded reads still work (a reservation's details need no consent, unlike a traveller's profile)
        r = await c.call_tool("airline__get_reservation_details", {"reservation_id": "NO6JO3"})
        assert not r.is_error, r.content[0].text


async def test_over_http_and_a2a(tmp_path: Path) -> None:
    cfg = write_config(tmp_path)
    marker = tmp_path / "pwned"
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        start_new_session=True,
    )
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=90)
        for mode in ("legacy", "auto"):
            http = httpx2.AsyncClient(timeout=60, headers=auth)
            async with Client(
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), mode=mode
            ) as c:
                await run_attacks(c, marker)
        async with httpx2.AsyncClient(timeout=60, headers=auth) as http:
            for goal in attacks(marker):
                msg = {
                    "messageId": uuid.uuid4().hex,
                    "role": "ROLE_USER",
                    "parts": [
                        {
                            "data": {
                                "type": "tool_call",
                                "tool_call_id": "q",
                                "name": "sentinel__sentinel_query",
                                "args": {"goal": goal},
                            }
                        }
                    ],
                }
                r = await http.post(
                    f"http://127.0.0.1:{port}/a2a",
                    headers={"A2A-Version": "1.0"},
                    json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": msg}},
                )
                task = r.json()["result"]["task"]
                assert task["status"]["state"] in ("TASK_STATE_FAILED", "TASK_STATE_REJECTED"), (goal, task)
            assert not marker.exists()
            health = (await http.get(f"http://127.0.0.1:{port}/healthz")).json()
            assert health["status"] == "ok", health
        # the query worker dies with the gateway, even when the gateway is killed outright
        workers = [p for p in descendants(proc.pid) if "query_worker" in _cmdline(p)]
        assert workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        for _ in range(100):
            if not any(alive(p) for p in workers):
                break
            time.sleep(0.1)
        assert not any(alive(p) for p in workers)
    finally:
        stop_process(proc)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
