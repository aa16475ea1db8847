"""On the legacy SSE front, a request POSTed with an id still in flight in its session (the same id again, or
another spelling the SDK's dispatcher correlates with it: 5 and "5", "05") is refused (400, a JSON-RPC error
under its id), and the call in flight still gets its own answer on the stream, once. Before, the post was
taken (202), the dispatcher overwrote the older call's entry and both answers went out on the stream under
one id.

A real gateway over HTTP (the lean tests' fixture, the toolbox upstream's ``held`` tool, in flight until the
test lets it answer, and ``slow``), raw HTTP on 127.0.0.1: the event stream read by a task, posts sent one
after another (each taken before the next)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, AsyncIterator

import httpx2
import pytest

from tests.gateway.test_lean_calls import TOKEN, gateway  # noqa: F401 - the module's gateway fixture

pytestmark = pytest.mark.timeout(120)

AUTH = {"Authorization": f"Bearer {TOKEN}"}


class Session:
    def __init__(self, http: httpx2.AsyncClient, base: str, endpoint: str) -> None:
        self.http, self.base, self.endpoint = http, base, endpoint
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.early: list[dict[str, Any]] = []

    async def post(self, message: dict[str, Any]) -> httpx2.Response:
        return await self.http.post(self.base + self.endpoint, json=message, headers=AUTH)

    async def answer(self, rid: Any) -> dict[str, Any]:
        for i, frame in enumerate(self.early):
            if frame.get("id") == rid and ("result" in frame or "error" in frame):
                return self.early.pop(i)
        while True:
            frame = await asyncio.wait_for(self.frames.get(), 60)
            if frame.get("id") == rid and ("result" in frame or "error" in frame):
                return frame
            self.early.append(frame)


@pytest.fixture
async def session(gateway: int) -> AsyncIterator[Session]:  # noqa: F811
    base = f"http://127.0.0.1:{gateway}"
    async with httpx2.AsyncClient(timeout=30) as http:
        get = {**AUTH, "Accept": "text/event-stream"}
        async with http.stream("GET", base + "/sse", headers=get) as stream:
            assert stream.status_code == 200
            lines = stream.aiter_lines()
            endpoint = ""
            async for line in lines:
                if line.startswith("data: /messages/"):
                    endpoint = line[len("data: "):]
                    break
            s = Session(http, base, endpoint)

            async def read() -> None:
                async for line in lines:
                    if line.startswith("data: "):
                        s.frames.put_nowait(json.loads(line[len("data: "):]))

            reading = asyncio.create_task(read())
            try:
                assert (await s.post({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "sse-ids", "version": "1"}}})).status_code == 202
                assert "result" in await s.answer("init")
                await s.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
                yield s
            finally:
                reading.cancel()


def _call(rid: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


@pytest.mark.parametrize("first,second", [(7, 7), (5, "5"), ("5", 5), (5, "05"), ("a", "a")])
async def test_a_repeated_id_is_refused_and_the_first_call_answered(session: Session, first: Any,
                                                                   second: Any, tmp_path: Path) -> None:
    held = tmp_path / "held"  # the first call answers once the second post has its answer (held + ".go")
    assert (await session.post(_call(first, "tb__held", {"path": str(held)}))).status_code == 202
    try:
        again = await session.post(_call(second, "tb__echo", {"text": "second"}))
    finally:
        (tmp_path / "held.go").touch()
    assert again.status_code == 400, again.text
    assert again.json()["id"] == second and again.json()["error"]["code"] == -32600
    assert "still in flight" in again.json()["error"]["message"]
    done = await session.answer(first)
    assert "result" in done and done["result"]["content"][0]["text"] == "released", done
    assert (await session.post({"jsonrpc": "2.0", "id": "marker", "method": "ping"})).status_code == 202
    await session.answer("marker")
    stray = [f for f in session.early if f.get("id") in (first, second) and ("result" in f or "error" in f)]
    assert stray == [], f"more answers under the colliding ids: {stray}"
    # once answered, the id is free again
    assert (await session.post(_call(second, "tb__echo", {"text": "again"}))).status_code == 202
    assert (await session.answer(second))["result"]["content"][0]["text"] == "again"


async def test_a_cancelled_request_frees_its_id(session: Session) -> None:
    """Posts reach the dispatcher in order: the cancellation reaches the older call before the newer one."""
    assert (await session.post(_call("c", "tb__slow", {"seconds": 2}))).status_code == 202
    await session.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c"}})
    assert (await session.post(_call("c", "tb__echo", {"text": "reused"}))).status_code == 202
    # (had the cancellation reached the newer call, this answer would be the older call's)
    assert (await session.answer("c"))["result"]["content"][0]["text"] == "reused"
