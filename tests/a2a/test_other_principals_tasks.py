"""A peer that learns (or guesses) another principal's task id or context id can do nothing with it: not read,
list, follow, cancel or answer the task (on either binding), nor ask to be called back about it; a context id
it reuses starts its own conversation, under its own guard session. Every refusal reads as "no such task", the
same as for an id nobody holds, so an id is not confirmed either."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.a2a.a2a_rig import open_port, rpc, serve, user_message
from tests.a2a.test_ws_binding import Peer, ws_connect

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)

ALICE = {"X-API-Key": "alice-key-123"}
BOB = {"X-API-Key": "bob-key-4567"}
NOBODYS = "0f5e2c1a-0000-4000-8000-000000000000"


def _call(name: str, args: dict[str, Any], context_id: str | None = None) -> dict[str, Any]:
    part = {"data": {"type": "tool_call", "tool_call_id": "x", "name": name, "args": args}}
    return user_message(part, context_id=context_id)


def _not_found(reply: dict[str, Any], method: str) -> None:
    assert "error" in reply, (method, reply)
    assert reply["error"]["code"] in (-32001, -32003), (method, reply)  # no such task / no push at all


async def test_another_principals_task_and_context_are_out_of_reach(http):
    settings = A2ASettings(api_keys={"alice": "alice-key-123", "bob": "bob-key-4567"})
    async with open_port() as port, serve(port, settings) as srv:
        # alice's call waits for her answer (the guard asks), in her context
        asked = await rpc(
            http,
            srv.rpc_url,
            "SendMessage",
            {"message": _call("tools__delete_file", {"path": "/tmp/a"}, "ctx-alice")},
            headers=ALICE,
        )
        task = asked["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
        key = task["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
        yes = {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}
        calls_before = len(port.calls)

        for tid in (task["id"], NOBODYS):  # alice's id and an id nobody holds answer alike
            tries = {
                "GetTask": {"id": tid, "historyLength": 10},
                "CancelTask": {"id": tid},
                "SendMessage": {"message": user_message({"data": yes}, task_id=tid)},
                "CreateTaskPushNotificationConfig": {
                    "taskId": tid,
                    "config": {"url": "http://169.254.169.254/latest/meta-data/"},
                },
                "GetTaskPushNotificationConfig": {"taskId": tid, "id": "1"},
                "ListTaskPushNotificationConfigs": {"taskId": tid},
            }
            for method, params in tries.items():
                _not_found(await rpc(http, srv.rpc_url, method, params, headers=BOB), method)
            for method, params in (
                ("SubscribeToTask", {"id": tid}),
                ("SendStreamingMessage", tries["SendMessage"]),
            ):
                r = await http.post(
                    srv.rpc_url,
                    json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                    headers=BOB,
                )
                assert r.headers["content-type"].startswith("application/json"), (method, r.text)
                _not_found(r.json(), method)
            async with ws_connect(srv.ws_url, additional_headers={"A2A-Version": "1.0", **BOB}) as ws:
                peer = Peer(ws)
                for method, params in [*tries.items(), ("SubscribeToTask", {"id": tid})]:
                    _not_found(await peer.call(method, params), f"ws {method}")

        listed = await rpc(http, srv.rpc_url, "ListTasks", {"contextId": "ctx-alice"}, headers=BOB)
        assert listed["result"]["tasks"] == [] and listed["result"]["totalSize"] == 0
        assert len(port.calls) == calls_before  # nothing ran for bob
        still = await rpc(http, srv.rpc_url, "GetTask", {"id": task["id"]}, headers=ALICE)
        assert still["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"  # still alice's to answer

        # bob naming alice's context gets a task of his own, under his own guard session
        mine = await rpc(
            http,
            srv.rpc_url,
            "SendMessage",
            {"message": _call("tools__echo", {"text": "b"}, "ctx-alice")},
            headers=BOB,
        )
        assert mine["result"]["task"]["id"] != task["id"]
        sessions = {c.client: c.session_id for c in port.calls}
        assert sessions["bob"] != sessions["alice"] and "ctx-alice" in sessions["bob"]
        alices = await rpc(http, srv.rpc_url, "ListTasks", {"contextId": "ctx-alice"}, headers=ALICE)
        assert [t["id"] for t in alices["result"]["tasks"]] == [task["id"]], json.dumps(alices)[:300]
