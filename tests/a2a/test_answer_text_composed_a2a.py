"""An A2A peer answering Sentinel's text question (as the agent, or for the user where the gateway takes its
answers so): the answer is judged and kept in NFC, as every other way in (``answer_validation.composed``).
A decomposed "Mía" is the rule's blocked 'Mía', and a decomposed "José" the allowed 'José'. Real gateway
over HTTP with A2A mounted, real policy engine, the toolbox upstream."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a

from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)
TOOLBOX = str(PROJECT_ROOT / "tests" / "gateway" / "toolbox_server.py")
PEER = "peer-token-0123456789"
RULES = """
askable(traveller(P, N), "Who travels on ~w?", text, [from([user, agent])]).
allowed_name('Jos\u00e9').
blocked_name('M\u00eda').
guard('tb__write_marker', [path = P, text = _], (traveller(P, N), allowed_name(N))).
guard('tb__echo', [text = T], (traveller(T, N), \\+ blocked_name(N))).
"""


async def _ask_and_answer(http: Any, base: str, name: str, args: dict[str, Any], value: str,
                          provenance: str) -> dict[str, Any]:
    async def send(*parts: dict[str, Any], task_id: str | None = None) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": {"message": user_message(*parts, task_id=task_id)}}
        return (await http.post(base + "/a2a", json=body)).json()["result"]["task"]

    call = {"type": "tool_call", "tool_call_id": "tc-1", "name": name, "args": args}
    task = await send({"data": call})
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
    parts = task["status"]["message"]["parts"]
    [q] = next(p["data"] for p in parts if p.get("data", {}).get("type") == "input_request")["questions"]
    answer = {"action": "accept", "content": {"answer": value}, "provenance": provenance}
    return await send({"data": {"answers": {q["key"]: answer}}}, task_id=task["id"])


@pytest.mark.parametrize("provenance", ["agent", "user"])
async def test_a_peers_decomposed_answer_is_the_composed_name(tmp_path: Path, provenance: str) -> None:
    rules = tmp_path / "travel.pl"
    rules.write_text(RULES)
    raw = {
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        "sentinel": {
            "data_dir": str(tmp_path), "builtins": [],
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
            "principals": [{"name": "peer", "token": PEER}],
            "a2a": {"name": "composed-test", "answers_provenance": provenance},
        },
    }
    marker = tmp_path / "m.txt"
    async with gateway_with_a2a(raw, tmp_path) as gw, httpx2.AsyncClient(
            timeout=60, headers={"A2A-Version": "1.0", "Authorization": f"Bearer {PEER}"}) as http:
        done = await _ask_and_answer(http, gw.base, "tb__echo", {"text": "flight 7"},
                                     unicodedata.normalize("NFD", "M\u00eda"), provenance)
        assert done["status"]["state"] != "TASK_STATE_COMPLETED", done  # the blocked name
        done = await _ask_and_answer(http, gw.base, "tb__write_marker", {"path": str(marker), "text": "x"},
                                     unicodedata.normalize("NFD", "Jos\u00e9"), provenance)
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done  # the allowed name
    assert marker.read_text() == "x\n"
