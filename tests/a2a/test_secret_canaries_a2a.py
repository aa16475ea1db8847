"""The canary sweep through A2A: a peer (a principal known by its token) calls a tool whose password
argument carries a canary, allowed, denied, asked, failed upstream with the password in its error; the owner's
token and the peer's token are canaries too. None of them is in the agent card, the questions the task asks,
the task's status texts (but a result that hands the peer back what it sent), the audit rows, or anything
another peer reads of those tasks (GetTask of each, ListTasks)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(150)
SERVER = str(PROJECT_ROOT / "tests" / "gateway" / "secret_server.py")
PASSWORD = "Canary-Pw-4417-xq"
OWNER = "canary-owner-token-8812-zz"
PEER = "canary-peer-token-6614-ww"
OTHER = "another-peer-token-0123456789abcdef"
CANARIES = (PASSWORD, OWNER, PEER, "4417-xq", "8812-zz", "6614-ww")


def call(name: str) -> dict[str, Any]:
    return {"data": {"type": "tool_call", "tool_call_id": "tc-1", "name": name,
                     "args": {"user": "ann", "password": PASSWORD}}}


def questions(task: dict[str, Any]) -> list[dict[str, Any]]:
    parts = (task["status"].get("message") or {}).get("parts") or []
    return [q for p in parts if p.get("data", {}).get("type") == "input_request"
            for q in p["data"]["questions"]]


async def test_no_a2a_output_carries_a_planted_secret(tmp_path: Path) -> None:
    raw = {
        "mcpServers": {"sec": {"command": sys.executable, "args": [SERVER], "timeout": 3}},
        "sentinel": {"data_dir": str(tmp_path), "builtins": [], "http": {"token": OWNER},
                     "policy": {"deny": ["sec__denied_login"]},
                     "principals": [{"name": "peer", "token": PEER}, {"name": "other", "token": OTHER}],
                     "a2a": {"name": "canaries"}},
    }
    outputs: dict[str, str] = {}
    ids: list[str] = []
    async with gateway_with_a2a(raw, tmp_path) as gw:
        headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {PEER}"}
        async with httpx2.AsyncClient(timeout=60, headers=headers) as http:
            outputs["agent card"] = (await http.get(gw.base + "/.well-known/agent-card.json")).text
            for tool in ("login", "denied_login", "failing_login", "set_password"):
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": user_message(call(f"sec__{tool}"))}}
                task = (await http.post(gw.base + "/a2a", json=body)).json()["result"]["task"]
                outputs[f"questions of {tool}"] = json.dumps(questions(task), ensure_ascii=False)
                outputs[f"state of {tool}"] = task["status"]["state"]
                ids.append(task["id"])
        # another peer of the same gateway: the peer's tasks are not its to read
        other = {"A2A-Version": "1.0", "Authorization": f"Bearer {OTHER}"}
        async with httpx2.AsyncClient(timeout=60, headers=other) as http:
            for n, tid in enumerate(ids):
                body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                        "params": {"id": tid, "historyLength": 50}}
                outputs[f"another peer's GetTask {n}"] = (await http.post(gw.base + "/a2a", json=body)).text
            body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
            outputs["another peer's ListTasks"] = (await http.post(gw.base + "/a2a", json=body)).text
        outputs["audit"] = json.dumps(await read_audit(gw.config.store_path, tail=1000), default=str)
    assert outputs["state of set_password"] == "TASK_STATE_INPUT_REQUIRED", outputs
    assert "sec__set_password" in outputs["questions of set_password"], outputs
    assert "sec__failing_login" in outputs["audit"]
    assert len(ids) == 4 and '"tasks":[]' in outputs["another peer's ListTasks"].replace(" ", ""), outputs
    assert all('"error"' in outputs[f"another peer's GetTask {n}"] for n in range(4)), outputs
    found = {name: [c for c in CANARIES if c in text] for name, text in outputs.items()}
    assert not any(found.values()), {k: v for k, v in found.items() if v}
