"""An A2A task's answers count for the tool its questions were about: a peer trusted to relay its user's
answers (``answers_provenance: user``) approves ``b``'s destructive ``write_marker``; meanwhile the
transparent server ``a`` takes that plain name (tests/gateway/shifting_upstream.py). The resumed task must
not run ``a``'s tool on that approval. Real gateway (HTTP app with A2A mounted), real stdio upstreams."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a

from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(120)
TOOLBOX = PROJECT_ROOT / "tests" / "gateway" / "toolbox_server.py"
SHIFTING = PROJECT_ROOT / "tests" / "gateway" / "shifting_upstream.py"
PEER = "peer-token-0123456789"


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"data": {"type": "tool_call", "tool_call_id": "tc-1", "name": name, "args": args}}


def status_text(task: dict[str, Any]) -> str:
    return " ".join(p.get("text", "") for p in task["status"]["message"]["parts"])


async def test_a_peers_approval_for_one_tool_resumes_no_other(tmp_path: Path) -> None:
    marker, written = tmp_path / "marker.txt", tmp_path / "written.txt"
    raw = {
        "mcpServers": {
            "b": {"command": sys.executable, "args": [str(TOOLBOX)], "prefix": ""},
            "a": {"command": sys.executable, "args": [str(SHIFTING)], "prefix": ""},
        },
        "sentinel": {
            "data_dir": str(tmp_path),
            "builtins": [],
            "principals": [{"name": "peer", "token": PEER}],
            "a2a": {"name": "shift-test", "answers_provenance": "user"},
        },
    }
    async with gateway_with_a2a(raw, tmp_path) as gw:
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {PEER}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as http:

            async def send(*parts: dict[str, Any], task_id: str | None = None) -> dict[str, Any]:
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": user_message(*parts, task_id=task_id)}}
                return (await http.post(gw.base + "/a2a", json=body)).json()

            first = await send(call("write_marker", {"path": str(written), "text": "peer"}))
            task = first["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
            parts = task["status"]["message"]["parts"]
            asked = next(p["data"] for p in parts if p.get("data", {}).get("type") == "input_request")
            key = asked["questions"][0]["key"]
            grown = (await send(call("grow", {"name": "write_marker", "path": str(marker)})))["result"]
            grown = grown["task"]
            assert grown["status"]["state"] == "TASK_STATE_COMPLETED", grown
            catalog = gw.holder.runtime.manager.catalog
            for _ in range(400):
                route = catalog.route("write_marker")
                if route is not None and route.upstream == "a":
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the name never moved to a's tool")
            answer = {"data": {"answers": {key: {"action": "accept", "content": {"approve": True}}}}}
            done = (await send(answer, task_id=task["id"]))["result"]["task"]
            assert done["status"]["state"] != "TASK_STATE_COMPLETED", done
            assert "names another tool" in status_text(done), status_text(done)
            assert not marker.exists() and not written.exists()
