"""A second ``initialize`` on a connection that has one (an ``Mcp-Session-Id`` session, a stdio process) is
refused with a JSON-RPC error, and nothing negotiated changes (gateway/one_handshake.py). Before, the SDK
answered it and committed its params over the first: a client that opened without elicitation could declare
it mid-session, and Sentinel then pushed its confirmation to it (it asks only clients that declared
elicitation); its version and name changed the same way.

Real gateway (``serve`` over stdio and over HTTP, the toolbox upstream), raw JSON-RPC.
"""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.gateway.test_lean_calls import TOKEN, gateway  # noqa: F401 - the module's gateway fixture
from tests.gateway.test_lean_stdio_front import Wire

pytestmark = pytest.mark.timeout(120)

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
           "Content-Type": "application/json"}
PLAIN = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "first", "version": "1"}}
# what a second initialize would change: the version, the client's name, and elicitation declared
SWAPPED = {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
           "clientInfo": {"name": "second", "version": "2"}}
DESTRUCTIVE = {"name": "tb__delete_thing", "arguments": {"name": "x"}}


def _request(rid: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def _refused_again(answer: dict[str, Any]) -> None:
    assert "error" in answer, answer
    assert answer["error"]["code"] == -32600 and "already initialized" in answer["error"]["message"]


def _blocked(frame: dict[str, Any]) -> None:
    """The destructive call's first frame: the call held for a client that cannot be asked, never a push."""
    assert frame.get("method") != "elicitation/create", "the second initialize's elicitation was believed"
    assert frame["result"]["_meta"]["sentinel/blocked"] is True, frame


async def test_a_second_initialize_on_an_http_session_is_refused(gateway: int) -> None:  # noqa: F811
    url = f"http://127.0.0.1:{gateway}/mcp"
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(url, json=_request(0, "initialize", PLAIN), headers=HEADERS)
        session = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
                   "Mcp-Protocol-Version": "2025-06-18"}
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        again = await http.post(url, json=_request(1, "initialize", SWAPPED), headers=session)
        _refused_again(_first_event(again.text))
        call = _request(2, "tools/call", DESTRUCTIVE)
        async with http.stream("POST", url, json=call, headers=session) as r:
            if r.headers["content-type"] == "application/json":  # the answer alone: one JSON response
                _blocked(json.loads(await r.aread()))
            else:
                async for line in r.aiter_lines():  # the first event only: a push would wait for its answer
                    if line.startswith("data: "):
                        _blocked(json.loads(line[len("data: "):]))
                        break
                else:
                    raise AssertionError("the stream ended without an event")
        # the session still speaks the version first negotiated
        listed = await http.post(url, json=_request(3, "tools/list", {}), headers=session)
        assert "result" in _first_event(listed.text)


def _first_event(text: str) -> dict[str, Any]:
    if text.lstrip().startswith("{"):
        return json.loads(text)
    return next(json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: "))


def test_a_second_initialize_over_stdio_is_refused(tmp_path: Path) -> None:
    wire = Wire(tmp_path)
    try:
        wire.send(_request("init", "initialize", PLAIN))
        assert wire.answer("init")["result"]["protocolVersion"] == "2025-06-18"
        wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i in range(3):  # however often it is tried
            wire.send(_request(f"again{i}", "initialize", SWAPPED))
            _refused_again(wire.answer(f"again{i}"))
        wire.send(_request("call", "tools/call", DESTRUCTIVE))
        _blocked(_first_frame(wire, "call"))
    finally:
        wire.close()


def _first_frame(wire: Wire, rid: Any, timeout: float = 60.0) -> dict[str, Any]:
    """The first frame that answers ``rid`` or asks the client something."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            frame = wire.lines.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"nothing for {rid!r}") from None
        assert frame is not None, "the gateway ended"
        if frame.get("id") == rid or frame.get("method") == "elicitation/create":
            return frame


async def test_an_initialize_notification_on_an_initialized_connection_is_dropped_quietly() -> None:
    """``initialize`` sent without an id has no one to answer: raising the refusal made the SDK log an error
    with a traceback for every such line (a client could fill the log). It is dropped, and nothing of the
    connection changes (the chain is not run)."""
    from types import SimpleNamespace

    from sentinel_mcp.gateway.one_handshake import one_handshake

    ran: list[Any] = []

    async def call_next(ctx: Any) -> Any:
        ran.append(ctx)

    ctx = SimpleNamespace(method="initialize", protocol_version="2025-06-18", request_id=None,
                          session=SimpleNamespace(client_params=object()))
    assert await one_handshake(ctx, call_next) is None  # type: ignore[arg-type]
    assert ran == []
