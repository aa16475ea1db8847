"""A peer's ``tool_call`` reaches what its principal's grants name and nothing else, however it spells the
name of a tool beyond them: case, spaces, separators, a namespace left out, invisible or full-width
characters, globs, path tricks, the identity of a built-in. Each is a task that ends without the tool having
run (the gateway's audit shows no call of it that succeeded), over HTTP and over the WebSocket's
``tool_call``. Real gateway and policy engine, a real toolbox upstream."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a
from tests.a2a.test_answers_through_gateway import TOOLBOX
from tests.a2a.test_ws_binding import Peer, ws_connect

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(180)
PEER = "narrow-peer-token-0123456789"

SPELLINGS = [
    "tb__pid", "TB__pid", "tb__PID", "Tb__Pid", " tb__pid", "tb__pid ", "tb__pid\n", "tb__pid\x00",
    "tb__pid\u200b", "\u200btb__pid", "tb__\u0440id", "ｔｂ__pid", "tb_pid", "tb___pid", "tb.pid", "tb/pid",
    "tb:pid", "pid", "tb__echo/../pid", "tb__echo\x00tb__pid", "tb__*", "*", "tb__p?d", "tb__[p]id",
    "tb__echo,tb__pid", "sentinel__sentinel_facts", "sentinel__sentinel_status", "a2a__a2a_send",
]


def _tool_call(name: str) -> dict[str, Any]:
    return {"type": "tool_call", "tool_call_id": "t", "name": name, "args": {}}


async def test_no_spelling_reaches_a_tool_beyond_the_grants(tmp_path: Path) -> None:
    raw = {
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        "sentinel": {
            "data_dir": str(tmp_path),
            "builtins": ["sentinel"],
            "rulebases": [str(RULEBASES_DIR / "default.pl")],
            "principals": [{"name": "narrow", "token": PEER, "tools": ["tb__echo"]}],
            "a2a": {"name": "names-test"},
        },
    }
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {PEER}"}
    async with gateway_with_a2a(raw, tmp_path) as gw, httpx2.AsyncClient(timeout=60, headers=headers) as http:

        async def send(data: dict[str, Any]) -> dict[str, Any]:
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": user_message({"data": data})}}
            reply: dict[str, Any] = (await http.post(gw.base + "/a2a", json=body)).json()
            return reply

        # what the grants name runs (the test can tell a call that ran)
        echoed = await send({**_tool_call("tb__echo"), "args": {"text": "hi"}})
        assert echoed["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", echoed
        for name in SPELLINGS:
            reply = await send(_tool_call(name))
            if "error" in reply:
                assert reply["error"]["code"] == -32602, (name, reply)
                continue
            state = reply["result"]["task"]["status"]["state"]
            assert state in ("TASK_STATE_REJECTED", "TASK_STATE_FAILED"), (repr(name), reply)
        async with ws_connect(gw.base.replace("http", "ws") + "/a2a/ws", additional_headers=headers) as ws:
            peer = Peer(ws)
            for name in SPELLINGS[:12]:
                params = {k: v for k, v in _tool_call(name).items() if k != "type"}
                reply = await peer.call("tool_call", params)
                if "error" in reply:
                    continue
                state = reply["result"]["task"]["status"]["state"]
                assert state in ("TASK_STATE_REJECTED", "TASK_STATE_FAILED"), (repr(name), reply)
        rows = await read_audit(gw.config.store_path, tail=1000)
        ran = {r["tool"] for r in rows if r["outcome"] == "ok"}
        assert ran == {"tb__echo"}, ran
