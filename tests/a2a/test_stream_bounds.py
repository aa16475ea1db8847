"""Open streams are counted per caller and in all, SSE responses and WebSocket connections together
(``stream_slots.py``), against a real uvicorn server: a stream past a bound is refused (HTTP 429) before
anything runs, and every way a stream ends gives its slot back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from tests.a2a.a2a_rig import RELEASE, Served, open_port, rpc, serve, user_message
from tests.a2a.test_streaming import SseStream, echo_part, release, state, wait_part
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

from sentinel_mcp.a2a.app import create_a2a_routes
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)

NEW_TASK = {"message": user_message(echo_part("never runs"))}

KEYS = {"rover": "rover-key-1234", "drone": "drone-key-1234", "owl": "owl-key-12345"}


def as_(who: str) -> dict[str, str]:
    return {"X-API-Key": KEYS[who], "A2A-Version": "1.0"}


def settings(per_caller: int = 2, total: int = 100) -> A2ASettings:
    return A2ASettings(api_keys=KEYS, max_streams_per_caller=per_caller, max_streams=total)


@contextlib.asynccontextmanager
async def served(per_caller: int = 2, total: int = 100) -> AsyncIterator[Served]:
    async with open_port() as port, serve(port, settings(per_caller, total)) as srv:
        yield srv


def body(method: str, params: Any, rid: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def ws_connect(srv: Served, who: str, **kw: Any):  # type: ignore[no-untyped-def]
    return connect(srv.ws_url, subprotocols=["a2a.v1.json"], additional_headers=as_(who), **kw)


async def settled(check: Callable[[], bool], tries: int = 500) -> bool:
    """``check`` once it holds, polled a bounded number of times (the server notices a client gone in its
    own time)."""
    for _ in range(tries):
        if check():
            return True
        await asyncio.sleep(0.01)
    return check()


async def open_waiting(stack: contextlib.AsyncExitStack, http: httpx2.AsyncClient, srv: Served, who: str,
                       key: str) -> str:
    """An SSE stream of a new task that waits for ``key``, held open on ``stack``; the task's id."""
    r = await stack.enter_async_context(
        http.stream("POST", srv.rpc_url, json=body("SendStreamingMessage", {"message": user_message(
            wait_part(key))}), headers=as_(who))
    )
    assert r.status_code == 200
    frames = SseStream(r, 1).frames()
    stack.push_async_callback(frames.aclose)  # (an abandoned reader closes the response when collected)
    first = await anext(frames)
    assert state(first["result"]) == "TASK_STATE_WORKING"
    return str(first["result"]["task"]["id"])


async def open_ws(stack: contextlib.AsyncExitStack, srv: Served, who: str) -> ClientConnection:
    ws: ClientConnection = await stack.enter_async_context(ws_connect(srv, who))
    await ws.send(json.dumps(body("GetTask", {"id": "none"})))
    assert json.loads(await ws.recv())["error"]["code"] == -32001  # served: the connection is up
    return ws


async def refused_sse(http: httpx2.AsyncClient, srv: Served, who: str, method: str, params: Any,
                      bound: str) -> None:
    r = await http.post(srv.rpc_url, json=body(method, params, rid="x"), headers=as_(who))
    assert r.status_code == 429, r.text
    assert r.headers["content-type"].startswith("application/json")
    error = r.json()
    assert error["id"] == "x" and error["error"]["code"] == -32004
    assert bound in error["error"]["message"], error
    assert error["error"]["data"][0]["metadata"]["setting"] == bound.split(" ")[0]


async def refused_ws(srv: Served, who: str, bound: str) -> None:
    with pytest.raises(InvalidStatus) as exc:
        async with ws_connect(srv, who):
            pass
    assert exc.value.response.status_code == 429
    error = json.loads(exc.value.response.body or b"{}")
    assert error["error"]["code"] == -32004 and bound in error["error"]["message"], error


def started(srv: Served) -> tuple[int, int]:
    """What a refused stream must not have changed: the guarded calls and the tasks."""
    return len(srv.port.calls), len(srv.service.store.all_records())


async def test_a_caller_at_its_bound_is_refused_on_both_bindings_before_anything_runs(http):
    key = f"bound-{uuid.uuid4()}"
    async with served(per_caller=2) as srv, contextlib.AsyncExitStack() as stack:
        task_id = await open_waiting(stack, http, srv, "rover", key)
        await open_ws(stack, srv, "rover")  # an SSE stream and a connection: the two rover may hold
        assert srv.service.stream_slots.held("rover") == 2
        before = started(srv)
        bound = "max_streams_per_caller = 2"
        await refused_sse(http, srv, "rover", "SendStreamingMessage", NEW_TASK, bound)
        assert started(srv) == before  # the refused send started no task and made no call
        await refused_sse(http, srv, "rover", "SubscribeToTask", {"id": task_id}, bound)
        await refused_ws(srv, "rover", bound)
        assert srv.service.stream_slots.held("rover") == 2
        # another caller is not held back by rover's bound
        drone_task = await open_waiting(stack, http, srv, "drone", key)
        drone_ws = await open_ws(stack, srv, "drone")
        await drone_ws.send(json.dumps(body("GetTask", {"id": drone_task})))
        assert json.loads(await drone_ws.recv())["result"]["id"] == drone_task
        assert srv.service.stream_slots.held("drone") == 2
        release(key)
    assert await settled(lambda: srv.service.stream_slots.held() == 0)


async def test_the_overall_bound_holds_for_every_caller(http):
    key = f"total-{uuid.uuid4()}"
    async with served(per_caller=2, total=3) as srv, contextlib.AsyncExitStack() as stack:
        await open_waiting(stack, http, srv, "rover", key)
        await open_ws(stack, srv, "rover")
        await open_waiting(stack, http, srv, "drone", key)
        assert srv.service.stream_slots.held() == 3
        before = started(srv)
        bound = "max_streams = 3"
        await refused_sse(http, srv, "drone", "SendStreamingMessage", NEW_TASK, bound)
        await refused_ws(srv, "drone", bound)
        await refused_sse(http, srv, "owl", "SendStreamingMessage", NEW_TASK, bound)
        await refused_ws(srv, "owl", bound)
        assert started(srv) == before
        # unary calls are not streams: they still go through
        sent = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(echo_part("yes"))},
                         headers=as_("owl"))
        assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        release(key)
    assert await settled(lambda: srv.service.stream_slots.held() == 0)


async def test_every_way_a_stream_ends_gives_its_slot_back(http):
    """A burst of streams, each ended another way; with one slot per caller a slot not given back refuses
    the next stream, and the count is back at zero after each."""
    async with served(per_caller=1, total=1) as srv:
        slots = srv.service.stream_slots

        async def freed() -> None:
            assert await settled(lambda: slots.held() == 0)

        for round_ in range(4):
            # SSE: the task ends, and with it the stream
            async with http.stream("POST", srv.rpc_url, json=body(
                    "SendStreamingMessage", {"message": user_message(echo_part(f"r{round_}"))}),
                    headers=as_("rover")) as r:
                assert r.status_code == 200
                events = [f["result"] async for f in SseStream(r, 1).frames()]
            assert state(events[-1]) == "TASK_STATE_COMPLETED"
            assert slots.held() == 0  # given back before the response's last chunk

            # SSE: the client goes away mid-stream (the task runs on)
            key = f"gone-{uuid.uuid4()}"
            async with httpx2.AsyncClient(timeout=30) as leaving, contextlib.AsyncExitStack() as stack:
                task_id = await open_waiting(stack, leaving, srv, "rover", key)
            await freed()

            # SSE: an error before the first event (a plain JSON answer), and a stream of a task that is over
            r = await http.post(srv.rpc_url, json=body("SubscribeToTask", {"id": "no-such-task"}),
                                headers=as_("rover"))
            assert r.status_code == 200 and r.json()["error"]["code"] == -32001
            assert slots.held() == 0
            bad = await http.post(srv.rpc_url, json=body("SendStreamingMessage", {"message": {"parts": 7}}),
                                  headers=as_("rover"))
            assert bad.json()["error"]["code"] == -32602
            assert slots.held() == 0

            # WebSocket: the client closes the connection with a stream open on it
            async with ws_connect(srv, "rover") as ws:
                await ws.send(json.dumps(body("SubscribeToTask", {"id": task_id}, rid="s")))
                assert json.loads(await ws.recv())["frame"] == "ev"
            await freed()

            # WebSocket: the server closes it (unsupported A2A-Version)
            async with connect(srv.ws_url, additional_headers={**as_("rover"), "A2A-Version": "0.3"}) as ws:
                assert json.loads(await ws.recv())["error"]["code"] == -32009
                await ws.wait_closed()
            await freed()

            # SSE: the task is canceled while the stream waits on it (shutdown: its own test, below)
            async with http.stream("POST", srv.rpc_url, json=body("SubscribeToTask", {"id": task_id}),
                                   headers=as_("rover")) as r:
                frames = SseStream(r, 1).frames()
                assert state((await anext(frames))["result"]) == "TASK_STATE_WORKING"
                canceled = await rpc(http, srv.rpc_url, "CancelTask", {"id": task_id}, headers=as_("rover"))
                assert canceled["result"]["status"]["state"] == "TASK_STATE_CANCELED"
                assert [state(f["result"]) async for f in frames] == ["TASK_STATE_CANCELED"]
            assert slots.held() == 0
            RELEASE.pop(key, None)
        # the caller still streams after the burst
        async with http.stream("POST", srv.rpc_url, json=body(
                "SendStreamingMessage", {"message": user_message(echo_part("after"))}),
                headers=as_("rover")) as r:
            assert r.status_code == 200
            assert state([f["result"] async for f in SseStream(r, 1).frames()][-1]) == "TASK_STATE_COMPLETED"
        assert slots.held() == 0


async def test_server_shutdown_gives_back_the_slots_of_open_streams_and_connections(http):
    key = f"stop-{uuid.uuid4()}"
    async with contextlib.AsyncExitStack() as clients:
        async with served(per_caller=3) as srv:
            r = await clients.enter_async_context(http.stream(
                "POST", srv.rpc_url, json=body("SendStreamingMessage", {"message": user_message(
                    wait_part(key))}), headers=as_("rover")))
            frames = SseStream(r, 1).frames()
            task_id = (await anext(frames))["result"]["task"]["id"]
            ws = await open_ws(clients, srv, "rover")
            await ws.send(json.dumps(body("SubscribeToTask", {"id": task_id}, rid="s")))
            assert json.loads(await ws.recv())["frame"] == "ev"
            assert srv.service.stream_slots.held() == 2
            srv.service.end_streams()  # what the server calls as it starts to shut down
            assert [f async for f in frames] == []  # the SSE response ends, its slot given back
            assert json.loads(await ws.recv())["frame"] == "fin"  # the stream on the connection ends too
            assert srv.service.stream_slots.held() == 1  # the connection itself is still open
        # the server has stopped, closing the WebSocket connection the client still held
        assert srv.service.stream_slots.held() == 0
        release(key)


async def test_a_response_whose_body_never_started_gives_its_slot_back(http):
    """The response's head is stuck in a socket buffer the peer never reads, and the peer leaves: the server
    cancels the response before its body ever ran, so the body's own ``finally`` never runs; the slot and
    the subscription must still be let go. Driven at the ASGI boundary (what uvicorn hands the app then),
    as a real client cannot fill the server's buffer and leave at that point on cue."""
    key = f"never-{uuid.uuid4()}"
    async with served(per_caller=1) as srv:
        sent = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(wait_part(key)),
                         "configuration": {"returnImmediately": True}}, headers=as_("rover"))
        task_id = sent["result"]["task"]["id"]
        app = Starlette(routes=create_a2a_routes(srv.port, srv.settings, service=srv.service))
        request = json.dumps(body("SubscribeToTask", {"id": task_id})).encode()
        messages = [{"type": "http.request", "body": request, "more_body": False}]
        head_sent = asyncio.Event()
        sent_out: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop(0)
            await head_sent.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent_out.append(message)
            if message["type"] == "http.response.start":
                head_sent.set()
                await asyncio.Event().wait()  # the write never completes

        scope = {
            "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": "/a2a", "raw_path": b"/a2a", "root_path": "",
            "query_string": b"", "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 80),
            "headers": [(b"content-type", b"application/json"), (b"x-api-key", KEYS["rover"].encode()),
                        (b"content-length", str(len(request)).encode())],
        }
        await app(scope, receive, send)
        assert [m["type"] for m in sent_out] == ["http.response.start"]  # not one event went out
        assert srv.service.stream_slots.held() == 0
        assert srv.service.events.subscribers(task_id) == 0
        release(key)


async def test_streams_on_one_websocket_count_against_the_callers_bound(http):
    """A connection's slot covers its first stream; a second stream at once on the same socket takes a slot of
    its own, so one caller cannot hold ``max_concurrent_per_socket`` streams on each of its sockets."""
    key = f"ws-many-{uuid.uuid4()}"
    async with served(per_caller=2) as srv, contextlib.AsyncExitStack() as stack:
        slots = srv.service.stream_slots
        sent = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(wait_part(key)),
                         "configuration": {"returnImmediately": True}}, headers=as_("rover"))
        task_id = sent["result"]["task"]["id"]
        ws = await open_ws(stack, srv, "rover")
        assert slots.held("rover") == 1
        await ws.send(json.dumps(body("SubscribeToTask", {"id": task_id}, rid="s1")))
        first = json.loads(await ws.recv())
        assert first["id"] == "s1" and first["frame"] == "ev"
        assert slots.held("rover") == 1  # the first stream rides on the connection's slot
        await ws.send(json.dumps(body("SubscribeToTask", {"id": task_id}, rid="s2")))
        second = json.loads(await ws.recv())
        assert second["id"] == "s2" and second["frame"] == "ev"
        assert slots.held("rover") == 2
        before = started(srv)
        # at the bound: a third stream on the socket, a stream over SSE and another socket are all refused
        await ws.send(json.dumps(body("SendStreamingMessage", NEW_TASK, rid="s3")))
        third = json.loads(await ws.recv())
        assert third["id"] == "s3" and third["error"]["code"] == -32004, third
        assert "max_streams_per_caller = 2" in third["error"]["message"]
        assert "frame" not in third  # refused before it was a stream
        bound = "max_streams_per_caller = 2"
        await refused_sse(http, srv, "rover", "SubscribeToTask", {"id": task_id}, bound)
        await refused_ws(srv, "rover", bound)
        assert started(srv) == before
        # unary requests on the socket still go through
        await ws.send(json.dumps(body("GetTask", {"id": task_id}, rid="g")))
        assert json.loads(await ws.recv())["result"]["id"] == task_id
        release(key)  # the task ends: both streams end, the second one's slot is given back
        fins: list[str] = []
        for _ in range(20):  # each stream's last events, then its fin
            frame = json.loads(await ws.recv())
            if frame.get("frame") == "fin":
                fins.append(frame["id"])
                if len(fins) == 2:
                    break
        assert sorted(fins) == ["s1", "s2"]
        assert await settled(lambda: slots.held("rover") == 1)
    assert await settled(lambda: srv.service.stream_slots.held() == 0)
