"""The JSONRPC-WS binding at /a2a/ws against a real uvicorn server, with the websockets client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tests.a2a.a2a_rig import RELEASE, open_port, serve, user_message
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)


class Peer:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        self.next_id += 1
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            frame["params"] = params
        await self.ws.send(json.dumps(frame))
        return await self.reply(self.next_id)

    async def reply(self, rid: Any) -> dict[str, Any]:
        while True:
            body = json.loads(await self.ws.recv())
            if body.get("id") == rid:
                return body

    async def raw(self, data: str | bytes) -> dict[str, Any]:
        await self.ws.send(data)
        return json.loads(await self.ws.recv())


def ws_connect(url: str, **kw: Any):  # type: ignore[no-untyped-def]
    kw.setdefault("subprotocols", ["a2a.v1.json"])
    kw.setdefault("max_size", 8 << 20)
    return connect(url, **kw)


async def test_subprotocol_negotiated_and_same_operations_as_http(rig):
    async with ws_connect(rig.ws_url, additional_headers={"A2A-Version": "1.0"}) as ws:
        assert ws.subprotocol == "a2a.v1.json"
        peer = Peer(ws)
        part = {
            "data": {"type": "tool_call", "tool_call_id": "c1", "name": "tools__echo", "args": {"text": "ws"}}
        }
        sent = await peer.call("SendMessage", {"message": user_message(part)})
        task = sent["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        got = await peer.call("GetTask", {"id": task["id"]})
        assert got["result"]["id"] == task["id"]
        listed = await peer.call("ListTasks", {})
        assert listed["result"]["totalSize"] == 1
        again = await peer.call("CancelTask", {"id": task["id"]})
        assert again["error"]["code"] == -32002
        missing = await peer.call("GetTask", {"id": "nope"})
        assert missing["error"]["code"] == -32001


async def test_no_subprotocol_offer_means_json(rig):
    async with connect(rig.ws_url) as ws:
        assert ws.subprotocol is None
        body = await Peer(ws).call("GetTask", {"id": "x"})
        assert body["error"]["code"] == -32001


async def test_unsupported_subprotocol_is_refused(rig):
    with pytest.raises(InvalidStatus) as exc:
        async with connect(rig.ws_url, subprotocols=["a2a.v1.cbor"]):
            pass
    assert exc.value.response.status_code == 400


async def test_bad_frames_get_error_codes_and_the_socket_survives(rig):
    async with ws_connect(rig.ws_url) as ws:
        peer = Peer(ws)
        assert (await peer.raw("{not json"))["error"]["code"] == -32700
        assert (await peer.raw(json.dumps({"jsonrpc": "1.0", "id": 5, "method": "GetTask"})))["error"][
            "code"
        ] == -32600
        assert (await peer.raw(json.dumps([1, 2])))["error"]["code"] == -32600
        assert (await peer.raw(b"\x00\x01binary"))["error"]["code"] == -32600
        assert (await peer.call("teleport", {}))["error"]["code"] == -32601
        assert (await peer.call("GetTask", {"id": 7}))["error"]["code"] == -32602
        assert (
            await peer.call("sensor_request", {"sensor": "location", "scope": "galactic", "policy_tag": "x"})
        )["error"]["code"] == -32602
        # (a message past the frame bound closes the socket: test_ws_frame_bounds.py)
        # still alive
        assert (await peer.call("GetTask", {"id": "x"}))["error"]["code"] == -32001
    assert rig.port.calls == []


async def test_design_calls_options_are_typed_as_strictly_as_a_send_message(rig):
    """``tool_call``/``sensor_request`` take ``context_id`` and ``return_immediately`` beside the design
    message: an empty context id was an internal error (-32603; the message it made failed the protocol's id
    check), a context id past the protocol's bound was no error, and ``"yes"``, ``1`` or ``"false"`` were
    flags (over HTTP the same options are strict). Now each is -32602, and nothing runs for it. A null option
    is its default (ProtoJSON, as over HTTP: ``protocol.CallerWire``)."""
    call = {"tool_call_id": "c1", "name": "tools__echo", "args": {"text": "x"}}
    reading = {"sensor": "location", "scope": "minimal", "policy_tag": "why"}
    bad = [{"context_id": ""}, {"context_id": "c" * 201}, {"context_id": 7}, {"return_immediately": "yes"},
           {"return_immediately": 1}, {"return_immediately": "false"}, {"return_immediately": []}]
    async with ws_connect(rig.ws_url) as ws:
        peer = Peer(ws)
        for method, params in (("tool_call", call), ("sensor_request", reading)):
            for options in bad:
                body = await peer.call(method, {**params, **options})
                assert body.get("error", {}).get("code") == -32602, (method, options, body)
        assert rig.port.calls == [] and len(rig.service.store) == 0
        ok = await peer.call("tool_call", {**call, "context_id": "c" * 200, "return_immediately": False})
        assert ok["result"]["task"]["contextId"] == "c" * 200
        defaults = await peer.call("tool_call", {**call, "context_id": None, "return_immediately": None})
        assert defaults["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", defaults


async def test_version_on_upgrade_request(rig):
    async with ws_connect(rig.ws_url, additional_headers={"A2A-Version": "0.3"}) as ws:
        body = json.loads(await ws.recv())
        assert body["error"]["code"] == -32009
        await ws.wait_closed()
        assert ws.close_code == 1008


async def test_sensor_request_method_returns_task_with_sensor_response(rig):
    async with ws_connect(rig.ws_url) as ws:
        body = await Peer(ws).call(
            "sensor_request",
            {
                "task_id": "task-123",
                "sensor": "location",
                "scope": "standard",
                "policy_tag": "location-for-search",
            },
        )
        task = body["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        data = task["artifacts"][0]["parts"][0]["data"]
        reading = data["artifacts"][0]["content"]
        assert reading["type"] == "sensor_response" and reading["task_id"] == "task-123"
        assert reading["payload"] == {"latitude": 37.77, "longitude": -122.42}
        assert reading["redactions"] == ["Rounded to street-level precision", "Removed altitude"]


async def test_tool_call_method_input_required_then_resume_over_ws(rig):
    async with ws_connect(rig.ws_url) as ws:
        peer = Peer(ws)
        body = await peer.call(
            "tool_call", {"tool_call_id": "c9", "name": "tools__delete_file", "args": {"path": "/tmp/z"}}
        )
        task = body["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        key = task["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
        answer = {"data": {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}}
        done = await peer.call("SendMessage", {"message": user_message(answer, task_id=task["id"])})
        assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_requests_in_flight_are_multiplexed(rig):
    RELEASE.pop("ws-slow", None)
    async with ws_connect(rig.ws_url) as ws:
        slow = {
            "jsonrpc": "2.0",
            "id": "slow",
            "method": "tool_call",
            "params": {"tool_call_id": "s", "name": "tools__wait_for", "args": {"key": "ws-slow"}},
        }
        await ws.send(json.dumps(slow))
        peer = Peer(ws)
        quick = await peer.call(
            "tool_call", {"tool_call_id": "q", "name": "tools__echo", "args": {"text": "q"}}
        )
        assert quick["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"  # not stuck behind "slow"
        RELEASE.setdefault("ws-slow", asyncio.Event()).set()
        done = await peer.reply("slow")
        assert done["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_peer_that_disconnects_mid_task_leaves_a_readable_task(rig):
    RELEASE.pop("ws-gone", None)
    async with ws_connect(rig.ws_url) as ws:
        await ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tool_call",
                    "params": {"tool_call_id": "g", "name": "tools__wait_for", "args": {"key": "ws-gone"}},
                }
            )
        )
        while not rig.service.store.all_records():
            await asyncio.sleep(0.01)
    record = rig.service.store.all_records()[0]
    RELEASE.setdefault("ws-gone", asyncio.Event()).set()
    await asyncio.wait({record.runner})
    async with ws_connect(rig.ws_url) as ws:
        got = await Peer(ws).call("GetTask", {"id": record.task.id})
        assert got["result"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_chat_degraded_without_llm(rig):
    async with ws_connect(rig.ws_url) as ws:
        peer = Peer(ws)
        opened = (await peer.call("chat_open", {"topic": "hello"}))["result"]
        assert opened["degraded"] is True and opened["responder"] == "none"
        assert opened["status"]["degraded"] is True and opened["status"]["sensors"] is True
        reply = (await peer.call("chat_message", {"channel_id": opened["channel_id"], "text": "hi"}))[
            "result"
        ]
        assert "No responder is available" in reply["text"]
        assert (await peer.call("chat_message", {"channel_id": "nope", "text": "hi"}))["error"][
            "code"
        ] == -32602
        assert (await peer.call("chat_close", {"channel_id": opened["channel_id"]}))["result"][
            "closed"
        ] is True
        for _ in range(16):
            assert "result" in await peer.call("chat_open", {})
        assert (await peer.call("chat_open", {}))["error"]["code"] == -32602  # capped per connection
        deep = await peer.raw("[" * 100_000)
        assert deep["error"]["code"] == -32700
    assert rig.port.calls == []


async def test_a_chat_keeps_a_bounded_transcript_with_or_without_a_responder():
    """A channel keeps the last ``chat_max_turns`` exchanges for the LLM's prompt. Without a responder each
    message was kept and never cut (the cut came after the 'no responder' answer): a peer sending message
    after message on one channel grew the gateway's memory 8 KB a message, without bound."""
    from sentinel_mcp.a2a.chat import ChatHub, ChatMessageParams, ChatOpenParams

    async with open_port() as port, serve(port, A2ASettings(chat_max_turns=2)) as srv:
        hub = ChatHub(srv.service)  # a connection's channels, as the WebSocket binding holds them
        opened = await hub.open(ChatOpenParams(), "peer")
        assert opened["responder"] == "none"
        for i in range(50):
            message = ChatMessageParams(channel_id=opened["channel_id"], text="x" * 8192)
            said = await hub.say(message, "peer")
            assert "No responder is available" in said["text"], i
        assert len(hub.channels[opened["channel_id"]].turns) <= 2 * 2


async def test_chat_with_local_llm_goes_through_the_guard():
    async with open_port(with_llm=True) as port, serve(port, A2ASettings()) as srv:
        async with ws_connect(srv.ws_url) as ws:
            peer = Peer(ws)
            opened = (await peer.call("chat_open", {}))["result"]
            assert opened["responder"] == "local_llm" and opened["degraded"] is False
            reply = (await peer.call("chat_message", {"channel_id": opened["channel_id"], "text": "ping"}))[
                "result"
            ]
            assert reply["text"] == "llm heard: ping"
            reply2 = (await peer.call("chat_message", {"channel_id": opened["channel_id"], "text": "pong"}))[
                "result"
            ]
            assert reply2["text"] == "llm heard: pong"
        call = port.calls[-1]
        assert call.name == "llm__llm_generate" and call.origin == "a2a" and call.client == "peer:127.0.0.1"
        assert (
            "user: ping" in call.arguments["prompt"]
            and "assistant: llm heard: ping" in call.arguments["prompt"]
        )
