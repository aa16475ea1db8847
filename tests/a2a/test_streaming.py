"""SendStreamingMessage and SubscribeToTask over SSE (POST /a2a) and over the WebSocket binding,
against a real uvicorn server with real in-process MCP servers behind the port."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import RELEASE, rpc, user_message
from websockets.asyncio.client import connect

from sentinel_mcp.a2a.task_events import RESYNC, EventStream, TaskEvents

pytestmark = pytest.mark.timeout(60)


def ws_connect(url: str):  # type: ignore[no-untyped-def]
    return connect(url, subprotocols=["a2a.v1.json"], max_size=8 << 20)


def echo_part(text: str) -> dict[str, Any]:
    return {
        "data": {"type": "tool_call", "tool_call_id": "c1", "name": "tools__echo", "args": {"text": text}}
    }


def wait_part(key: str) -> dict[str, Any]:
    return {
        "data": {"type": "tool_call", "tool_call_id": "w1", "name": "tools__wait_for", "args": {"key": key}}
    }


def delete_part(path: str) -> dict[str, Any]:
    return {
        "data": {
            "type": "tool_call",
            "tool_call_id": "d1",
            "name": "tools__delete_file",
            "args": {"path": path},
        }
    }


def release(key: str) -> None:
    RELEASE.setdefault(key, asyncio.Event()).set()


def kind(event: dict[str, Any]) -> str:
    (key,) = event.keys()
    return key


def state(event: dict[str, Any]) -> str | None:
    if "task" in event:
        return event["task"]["status"]["state"]
    if "statusUpdate" in event:
        return event["statusUpdate"]["status"]["state"]
    return None


class SseStream:
    """One SSE response: ``frames`` yields each data line as parsed JSON-RPC response."""

    def __init__(self, response: httpx2.Response, rid: Any) -> None:
        self.response = response
        self.rid = rid

    async def frames(self) -> AsyncIterator[dict[str, Any]]:
        async for line in self.response.aiter_lines():
            if line.startswith("data:"):
                frame = json.loads(line[5:])
                assert frame["jsonrpc"] == "2.0" and frame["id"] == self.rid, frame
                yield frame


async def sse_all(
    http: httpx2.AsyncClient, url: str, method: str, params: Any, rid: Any = 1
) -> list[dict[str, Any]]:
    """All StreamResponses of a stream that must end by itself."""
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    async with http.stream("POST", url, json=body) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        return [f["result"] async for f in SseStream(r, rid).frames()]


def input_key(event: dict[str, Any]) -> str:
    parts = event["statusUpdate"]["status"]["message"]["parts"]
    request = next(p["data"] for p in parts if (p.get("data") or {}).get("type") == "input_request")
    return request["questions"][0]["key"]


def accept(task_id: str, key: str) -> dict[str, Any]:
    return {
        "message": user_message(
            {"data": {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}}, task_id=task_id
        )
    }


async def test_card_declares_streaming(rig, http):
    card = (await http.get(rig.base_url + "/.well-known/agent-card.json")).json()
    assert card["capabilities"]["streaming"] is True


async def test_streamed_tool_call_is_working_then_completed_with_artifact(rig, http):
    events = await sse_all(
        http, rig.rpc_url, "SendStreamingMessage", {"message": user_message(echo_part("hi"))}
    )
    assert [kind(e) for e in events] == ["task", "artifactUpdate", "statusUpdate"]
    task = events[0]["task"]
    assert state(events[0]) == "TASK_STATE_WORKING"
    art = events[1]["artifactUpdate"]
    assert art["taskId"] == task["id"] and art["contextId"] == task["contextId"] and art["lastChunk"] is True
    assert any("echo: hi" in (p.get("text") or "") for p in art["artifact"]["parts"])
    update = events[2]["statusUpdate"]
    assert update["taskId"] == task["id"] and update["status"]["state"] == "TASK_STATE_COMPLETED"
    got = await rpc(http, rig.rpc_url, "GetTask", {"id": task["id"]})
    assert got["result"]["artifacts"][0] == art["artifact"]


async def test_rejected_message_streams_the_final_task_only(rig, http):
    events = await sse_all(
        http, rig.rpc_url, "SendStreamingMessage", {"message": user_message({"text": "plan my day"})}
    )
    assert [kind(e) for e in events] == ["task"]
    assert state(events[0]) == "TASK_STATE_REJECTED"


async def test_input_required_ends_the_stream_and_an_answer_resumes_it(rig, http):
    first = await sse_all(
        http, rig.rpc_url, "SendStreamingMessage", {"message": user_message(delete_part("/tmp/x"))}
    )
    assert [state(e) for e in first] == ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]
    task_id = first[0]["task"]["id"]
    key = input_key(first[1])
    second = await sse_all(http, rig.rpc_url, "SendStreamingMessage", accept(task_id, key), rid="r2")
    assert [kind(e) for e in second] == ["task", "artifactUpdate", "statusUpdate"]
    assert second[0]["task"]["id"] == task_id
    assert [state(e) for e in second] == ["TASK_STATE_WORKING", None, "TASK_STATE_COMPLETED"]
    assert any(
        "deleted /tmp/x" in (p.get("text") or "") for p in second[1]["artifactUpdate"]["artifact"]["parts"]
    )
    # the answered call ran once more, with the answer
    assert rig.port.calls[-1].answers and key in rig.port.calls[-1].answers


async def test_subscribe_to_a_running_task_gets_its_updates_on_both_bindings(rig, http):
    key = f"sub-{uuid.uuid4()}"
    sent = await rpc(
        http,
        rig.rpc_url,
        "SendMessage",
        {"message": user_message(wait_part(key)), "configuration": {"returnImmediately": True}},
    )
    task_id = sent["result"]["task"]["id"]
    body = {"jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask", "params": {"id": task_id}}
    async with ws_connect(rig.ws_url) as ws, http.stream("POST", rig.rpc_url, json=body) as r:
        await ws.send(
            json.dumps({"jsonrpc": "2.0", "id": "s1", "method": "SubscribeToTask", "params": {"id": task_id}})
        )
        ws_first = json.loads(await ws.recv())
        assert ws_first["id"] == "s1" and ws_first["frame"] == "ev"
        assert state(ws_first["result"]) == "TASK_STATE_WORKING"
        frames = SseStream(r, 7).frames()
        first = await anext(frames)
        assert first["result"]["task"]["id"] == task_id and state(first["result"]) == "TASK_STATE_WORKING"
        release(key)
        rest = [f["result"] async for f in frames]
        ws_rest = []
        while True:
            frame = json.loads(await ws.recv())
            ws_rest.append(frame)
            if frame["frame"] == "fin":
                break
    assert [kind(e) for e in rest] == ["artifactUpdate", "statusUpdate"]
    assert state(rest[-1]) == "TASK_STATE_COMPLETED"
    assert [f["result"] for f in ws_rest[:-1]] == rest  # same events on both bindings
    assert ws_rest[-1]["result"] == {"events": 3}
    assert rig.service.events.subscribers(task_id) == 0


async def test_client_that_disconnects_mid_stream_does_not_break_the_task(rig, http):
    key = f"gone-{uuid.uuid4()}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": user_message(wait_part(key))},
    }
    async with httpx2.AsyncClient(timeout=30) as leaving, leaving.stream("POST", rig.rpc_url, json=body) as r:
        first = await anext(SseStream(r, 1).frames())
    task_id = first["result"]["task"]["id"]  # the client has gone; the call still waits in the tool
    # a new subscriber sees the task still working, and then its completion
    again = {"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task_id}}
    async with http.stream("POST", rig.rpc_url, json=again) as r2:
        frames = SseStream(r2, 2).frames()
        assert state((await anext(frames))["result"]) == "TASK_STATE_WORKING"
        release(key)
        rest = [f["result"] async for f in frames]
    assert state(rest[-1]) == "TASK_STATE_COMPLETED"
    got = await rpc(http, rig.rpc_url, "GetTask", {"id": task_id})
    assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "released" in json.dumps(got["result"]["artifacts"])
    for _ in range(500):  # the departed stream lets go of its subscription once it notices
        if rig.service.events.subscribers(task_id) == 0:
            break
        await asyncio.sleep(0.02)
    assert rig.service.events.subscribers(task_id) == 0


async def test_stream_errors_come_before_any_event(rig, http):
    for method, params, code in (
        ("SubscribeToTask", {"id": "no-such-task"}, -32001),
        ("SubscribeToTask", {}, -32602),
        ("SendStreamingMessage", {"message": user_message(echo_part("x"), task_id="no-such-task")}, -32001),
    ):
        r = await http.post(rig.rpc_url, json={"jsonrpc": "2.0", "id": 3, "method": method, "params": params})
        assert r.headers["content-type"].startswith("application/json")
        assert r.json()["error"]["code"] == code, (method, r.json())
    done = await sse_all(http, rig.rpc_url, "SendStreamingMessage", {"message": user_message(echo_part("x"))})
    task_id = done[0]["task"]["id"]
    terminal = await rpc(http, rig.rpc_url, "SubscribeToTask", {"id": task_id})
    assert terminal["error"]["code"] == -32004  # A2A v1.0: a terminal task cannot be subscribed to
    again = await rpc(http, rig.rpc_url, "SendStreamingMessage", accept(task_id, "k"))
    assert again["error"]["code"] == -32004  # no input taken by a finished task


async def test_websocket_streams_ev_frames_then_fin_and_resumes_input(rig):
    async with ws_connect(rig.ws_url) as ws:

        async def stream(rid: str, method: str, params: Any) -> list[dict[str, Any]]:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
            frames = []
            while True:
                frame = json.loads(await ws.recv())
                assert frame["id"] == rid
                frames.append(frame)
                if frame.get("frame") != "ev":
                    return frames

        done = await stream("a", "SendStreamingMessage", {"message": user_message(echo_part("ws"))})
        assert [f["frame"] for f in done] == ["ev", "ev", "ev", "fin"]
        assert [state(f["result"]) for f in done[:3]] == ["TASK_STATE_WORKING", None, "TASK_STATE_COMPLETED"]
        assert done[-1]["result"] == {"events": 3}

        asked = await stream("b", "SendStreamingMessage", {"message": user_message(delete_part("/tmp/w"))})
        assert state(asked[-2]["result"]) == "TASK_STATE_INPUT_REQUIRED" and asked[-1]["frame"] == "fin"
        task_id = asked[0]["result"]["task"]["id"]
        resumed = await stream("c", "SendStreamingMessage", accept(task_id, input_key(asked[-2]["result"])))
        assert state(resumed[-2]["result"]) == "TASK_STATE_COMPLETED"

        missing = await stream("d", "SubscribeToTask", {"id": "no-such-task"})
        assert len(missing) == 1 and missing[0]["error"]["code"] == -32001 and "frame" not in missing[0]


async def test_slow_subscriber_never_blocks_the_publisher_and_resyncs():
    hub = TaskEvents(queue_size=4)
    current = {"task": {"id": "t", "status": {"state": "TASK_STATE_WORKING"}}}
    stream = EventStream(hub.subscribe("t"), lambda: current)
    for i in range(100):  # nobody reads: publishing must still return at once
        hub.publish("t", {"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}, "n": i}})
    assert stream.sub.lagged > 0 and stream.sub.queue.qsize() <= 4
    current = {"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}}
    events = stream.events()
    assert (await anext(events))["task"]["status"]["state"] == "TASK_STATE_WORKING"  # the first snapshot
    # the lost backlog became a resync, which reads the task as it is now (here: finished, ending the stream)
    assert stream.sub.queue._queue[0] is RESYNC  # type: ignore[attr-defined]
    assert (await anext(events)) == current
    with pytest.raises(StopAsyncIteration):
        await anext(events)
    assert hub.subscribers("t") == 0


async def test_another_callers_task_cannot_be_subscribed_to(http):
    from tests.a2a.a2a_rig import open_port, serve

    from sentinel_mcp.a2a.settings import A2ASettings

    settings = A2ASettings(api_keys={"rover": "rover-key-1234", "drone": "drone-key-1234"})
    async with open_port() as port, serve(port, settings) as srv:
        key = f"own-{uuid.uuid4()}"
        sent = await rpc(
            http,
            srv.rpc_url,
            "SendMessage",
            {"message": user_message(wait_part(key)), "configuration": {"returnImmediately": True}},
            headers={"X-API-Key": "rover-key-1234"},
        )
        task_id = sent["result"]["task"]["id"]
        other = await rpc(
            http, srv.rpc_url, "SubscribeToTask", {"id": task_id}, headers={"X-API-Key": "drone-key-1234"}
        )
        assert other["error"]["code"] == -32001
        unauth = await http.post(
            srv.rpc_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}},
        )
        assert unauth.status_code == 401
        body = {"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task_id}}
        async with http.stream("POST", srv.rpc_url, json=body, headers={"X-API-Key": "rover-key-1234"}) as r:
            frames = SseStream(r, 2).frames()
            assert (await anext(frames))["result"]["task"]["id"] == task_id  # the owner may
            release(key)
            assert state([f["result"] async for f in frames][-1]) == "TASK_STATE_COMPLETED"


async def test_cancel_ends_the_stream_with_canceled(rig, http):
    key = f"cancel-{uuid.uuid4()}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendStreamingMessage",
        "params": {"message": user_message(wait_part(key))},
    }
    async with http.stream("POST", rig.rpc_url, json=body) as r:
        frames = SseStream(r, 1).frames()
        task_id = (await anext(frames))["result"]["task"]["id"]
        canceled = await rpc(http, rig.rpc_url, "CancelTask", {"id": task_id})
        assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
        rest = [f["result"] async for f in frames]
    assert [state(e) for e in rest] == ["TASK_STATE_CANCELED"]
    RELEASE.pop(key, None)


async def test_end_streams_lets_the_server_stop_while_tasks_run_on(rig, http):
    key = f"stop-{uuid.uuid4()}"
    sent = await rpc(
        http,
        rig.rpc_url,
        "SendMessage",
        {"message": user_message(wait_part(key)), "configuration": {"returnImmediately": True}},
    )
    task_id = sent["result"]["task"]["id"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}
    async with ws_connect(rig.ws_url) as ws, http.stream("POST", rig.rpc_url, json=body) as r:
        await ws.send(
            json.dumps({"jsonrpc": "2.0", "id": "w", "method": "SubscribeToTask", "params": {"id": task_id}})
        )
        assert json.loads(await ws.recv())["frame"] == "ev"
        frames = SseStream(r, 1).frames()
        assert state((await anext(frames))["result"]) == "TASK_STATE_WORKING"
        rig.service.end_streams()
        assert [f async for f in frames] == []  # the SSE response ends
        fin = json.loads(await ws.recv())
        assert fin["frame"] == "fin" and fin["result"] == {"events": 1}
    got = await rpc(http, rig.rpc_url, "GetTask", {"id": task_id})
    assert got["result"]["status"]["state"] == "TASK_STATE_WORKING"  # the task was not touched
    release(key)
    for _ in range(500):
        got = await rpc(http, rig.rpc_url, "GetTask", {"id": task_id})
        if got["result"]["status"]["state"] != "TASK_STATE_WORKING":
            break
        await asyncio.sleep(0.02)
    assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
