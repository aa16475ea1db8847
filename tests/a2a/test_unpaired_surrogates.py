"""A JSON string may spell a lone UTF-16 surrogate (``"\\ud800"``), which is no Unicode text: a task is kept
and served as UTF-8 JSON, so it cannot hold one. A peer that sent one in a text part, a part's URL or file
name, metadata (a key or a value), a tool call's arguments or an answer got -32603 "Internal error" (the
store's size count failed to encode the task) on both bindings; it is -32602 naming where, and nothing
runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.a2a.a2a_rig import rpc, user_message
from tests.a2a.test_ws_binding import Peer, ws_connect

pytestmark = pytest.mark.timeout(60)

LONE = "\udc00"


def _tool(text: str) -> dict[str, Any]:
    call = {"type": "tool_call", "tool_call_id": "c1", "name": "tools__echo", "args": {"text": text}}
    return {"data": call}


# (what the peer sent, the path the error names)
SPELLINGS: list[tuple[dict[str, Any], str]] = [
    ({"message": user_message({"text": f"hi {LONE}"})}, "params.message.parts.0.text"),
    ({"message": user_message({"url": f"https://example.org/{LONE}"})}, "params.message.parts.0.url"),
    (
        {"message": user_message({"text": "hi", "filename": f"a{LONE}.txt"})},
        "params.message.parts.0.filename",
    ),
    ({"message": {**user_message({"text": "hi"}), "metadata": {"k": LONE}}}, "params.message.metadata.k"),
    ({"message": {**user_message({"text": "hi"}), "metadata": {LONE: 1}}}, "params.message.metadata"),
    ({"message": user_message(_tool(f"x{LONE}y"))}, "params.message.parts.0.data.args.text"),
    ({"message": user_message({"data": [1, {"deep": [LONE]}]})}, "params.message.parts.0.data.1.deep.0"),
    ({"message": user_message({"text": "hi"}), "metadata": {"m": [LONE]}}, "params.metadata.m.0"),
]


def _frame(method: str, params: Any, rid: int = 1) -> bytes:
    # json.dumps writes a lone surrogate as the escape "\udc00": valid JSON text, as a peer would send it
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode()


def _refused_naming(reply: dict[str, Any], where: str) -> None:
    assert "error" in reply, reply
    assert reply["error"]["code"] == -32602, reply
    assert where in reply["error"]["message"] and "surrogate" in reply["error"]["message"], reply


@pytest.mark.parametrize("params, where", SPELLINGS)
async def test_a_lone_surrogate_is_invalid_params_on_http(rig, http, params, where):
    for method in ("SendMessage", "SendStreamingMessage"):
        r = await http.post(
            rig.rpc_url, content=_frame(method, params), headers={"Content-Type": "application/json"}
        )
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json"), r.text
        _refused_naming(r.json(), where)
    assert rig.port.calls == []  # nothing ran
    listed = await rpc(http, rig.rpc_url, "ListTasks", {})
    assert listed["result"]["tasks"] == []  # nothing was kept


async def test_a_lone_surrogate_is_invalid_params_on_the_websocket(rig):
    async with ws_connect(rig.ws_url, additional_headers={"A2A-Version": "1.0"}) as ws:
        peer = Peer(ws)
        for i, (params, where) in enumerate(SPELLINGS):
            await ws.send(_frame("SendMessage", params, rid=100 + i).decode())
            _refused_naming(await peer.reply(100 + i), where)
        # the binding's own design calls take the same path
        await ws.send(_frame("tool_call", {"name": "tools__echo", "args": {"text": LONE}}, rid=7).decode())
        _refused_naming(await peer.reply(7), "params.args.text")
        ok = await peer.call("SendMessage", {"message": user_message(_tool("plain"))})  # the socket lives on
        assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", ok
    assert [c.name for c in rig.port.calls] == ["tools__echo"]


async def test_an_answer_with_a_lone_surrogate_leaves_the_question_open(rig, http):
    call = {
        "data": {
            "type": "tool_call",
            "tool_call_id": "d1",
            "name": "tools__delete_file",
            "args": {"path": "/tmp/x"},
        }
    }
    task = (await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(call)}))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
    key = task["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
    bad = {"answers": {key: {"action": "accept", "content": {"note": LONE}}}}
    answer = {"message": user_message({"data": bad}, task_id=task["id"])}
    r = await http.post(
        rig.rpc_url, content=_frame("SendMessage", answer), headers={"Content-Type": "application/json"}
    )
    _refused_naming(r.json(), f"params.message.parts.0.data.answers.{key}.content.note")
    got = await rpc(http, rig.rpc_url, "GetTask", {"id": task["id"]})
    assert got["result"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"  # still waiting, still answerable


async def test_finding_the_place_costs_no_more_than_the_frame(rig, http):
    """The place is named by its keys, which the caller writes: a path built for every item, under keys a
    frame long, held a copy of those keys per item (100 kB keys above 9,000 list items: about a gigabyte at
    once). Only the place returned is spelled out, each key in it cut to 100 characters."""
    long_key = "k" * 100_000
    leaf: Any = [0] * 9_000 + [LONE]
    for _ in range(8):
        leaf = {long_key: leaf}
    params = {"message": user_message({"data": leaf})}
    r = await http.post(
        rig.rpc_url, content=_frame("SendMessage", params), headers={"Content-Type": "application/json"}
    )
    reply = r.json()
    assert reply["error"]["code"] == -32602, reply
    assert f"params.message.parts.0.data.{'k' * 100}….{'k' * 100}…" in reply["error"]["message"]
    assert reply["error"]["message"].count(".9000 holds a lone surrogate") == 1
