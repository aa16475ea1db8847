"""A message sent again (the same messageId, by the same caller) acts once: the replay is answered with the
task the first started, through every door (JSON-RPC over HTTP, its stream, the WebSocket) and across a
restart when tasks are journalled. Real servers, real SQLite."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from tests.a2a.a2a_rig import open_port, rpc, serve, user_message
from tests.a2a.test_ws_binding import Peer, ws_connect

from sentinel_mcp.a2a.message_replays import SeenMessages
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)


def echo(text: str) -> dict:
    return {"data": {"type": "tool_call", "tool_call_id": "r", "name": "tools__echo", "args": {"text": text}}}


def echoes(port) -> int:  # noqa: ANN001 - the rig's ClientPort
    return sum(1 for c in port.calls if c.name == "tools__echo")


async def test_a_replayed_message_is_answered_with_the_first_task_on_every_door(rig, http):
    first = (await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(
        echo("book it"), message_id="m-1")}))["result"]["task"]
    assert first["status"]["state"] == "TASK_STATE_COMPLETED" and echoes(rig.port) == 1
    again = (await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(
        echo("book it"), message_id="m-1")}))["result"]["task"]
    assert again["id"] == first["id"]
    # the stream door: the first event is the first task, nothing new runs
    body = {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage",
            "params": {"message": user_message(echo("book it"), message_id="m-1")}}
    async with http.stream("POST", rig.rpc_url, json=body) as r:
        async for line in r.aiter_lines():
            if line.startswith("data:"):
                streamed = json.loads(line[5:])["result"]["task"]
                break
    assert streamed["id"] == first["id"]
    # the WebSocket door
    async with ws_connect(rig.ws_url, additional_headers={"A2A-Version": "1.0"}) as ws:
        again_ws = {"message": user_message(echo("book it"), message_id="m-1")}
        sent = await Peer(ws).call("SendMessage", again_ws)
    assert sent["result"]["task"]["id"] == first["id"]
    assert echoes(rig.port) == 1
    # another message id is another message
    other = (await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(
        echo("book it"), message_id="m-2")}))["result"]["task"]
    assert other["id"] != first["id"] and echoes(rig.port) == 2


async def test_a_replayed_answer_does_not_resume_the_task_again(rig, http):
    asked = (await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(
        {"data": {"type": "tool_call", "tool_call_id": "d", "name": "tools__delete_file",
                  "args": {"path": "/tmp/rt-a2a2-replay"}}})}))["result"]["task"]
    key = asked["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
    answer = {"data": {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}}
    msg = user_message(answer, task_id=asked["id"], message_id="a-1")
    done = (await rpc(http, rig.rpc_url, "SendMessage", {"message": msg}))["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    calls = len(rig.port.calls)
    replay = (await rpc(http, rig.rpc_url, "SendMessage", {"message": msg}))["result"]["task"]
    assert replay["id"] == asked["id"] and replay["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(rig.port.calls) == calls


async def test_a_replay_after_a_restart_is_answered_with_the_journalled_task(tmp_path: Path):
    db = tmp_path / "a2a-tasks.db"
    async with httpx2.AsyncClient(timeout=30, headers={"A2A-Version": "1.0"}) as http:
        async with open_port() as port, serve(port, A2ASettings(), task_db=db) as srv:
            first = (await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(
                echo("once"), message_id="kept-1")}))["result"]["task"]
        async with open_port() as port, serve(port, A2ASettings(), task_db=db) as srv:
            again = (await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(
                echo("once"), message_id="kept-1")}))["result"]["task"]
            assert again["id"] == first["id"] and echoes(port) == 0


def test_remembered_ids_are_bounded_per_caller_in_all_and_by_age():
    now = [0.0]
    seen = SeenMessages(per_caller=3, callers=2, max_age=100.0, clock=lambda: now[0])
    for i in range(5):
        assert seen.claim("a", f"m{i}") is None
        seen.settle("a", f"m{i}", f"t{i}")
    assert seen.claim("a", "m4") == "t4" and seen.claim("a", "m2") == "t2"
    assert seen.claim("a", "m1") is None  # the oldest beyond 3 forgotten
    seen.release("a", "m1")
    assert seen.claim("b", "x") is None and seen.claim("c", "y") is None  # a third caller: "a" forgotten
    assert seen.claim("a", "m4") is None
    seen.release("a", "m4")
    seen.settle("c", "y", "ty")
    now[0] = 101.0
    assert seen.claim("c", "y") is None  # aged out


def test_a_message_being_handled_is_not_started_twice():
    seen = SeenMessages()
    assert seen.claim("a", "m") is None
    assert seen.claim("a", "m") == SeenMessages.PENDING
    assert seen.claim("b", "m") is None  # another caller's message of that id is its own
    seen.release("a", "m")  # the first failed: a resend may try again
    assert seen.claim("a", "m") is None
