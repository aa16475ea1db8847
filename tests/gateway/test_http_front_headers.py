"""Headers of a streamable-HTTP request that the SDK or Sentinel read, in spellings a client should not send:
each gets a clear answer, never a plain-text 500 or a request served under one of two values.

Real gateway (the lean tests' fixture), raw HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import httpx2
import pytest

from tests.gateway.test_lean_calls import TOKEN, call, gateway  # noqa: F401 - the module's gateway fixture

pytestmark = pytest.mark.timeout(120)

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
           "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "headers", "version": "1"}}}


async def _session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    opened = await http.post(url, json=INIT, headers=HEADERS)
    session = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
               "Mcp-Protocol-Version": "2025-11-25"}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


@pytest.mark.parametrize("last_event_id", ["0", "no-such-event", "_GET_stream"])
async def test_a_get_resuming_from_an_event_opens_the_stream_afresh(gateway: int,  # noqa: F811
                                                                    last_event_id: str) -> None:
    """Sessions keep no event store: there is nothing to replay. The SDK returned no response for such a GET
    (uvicorn's plain-text 500, an error in the log each time)."""
    url = f"http://127.0.0.1:{gateway}/mcp"
    async with httpx2.AsyncClient(timeout=30) as http:
        session = await _session(http, url)
        get = {**{k: v for k, v in session.items() if k != "Content-Type"}, "Accept": "text/event-stream",
               "Last-Event-ID": last_event_id}
        async with http.stream("GET", url, headers=get) as stream:
            assert stream.status_code == 200, await stream.aread()
            assert stream.headers["content-type"].startswith("text/event-stream")
            await asyncio.sleep(0.2)
            ping = await http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=session)
            assert ping.status_code == 200 and '"result":{}' in ping.text
            assert not stream.is_closed


def test_a_conversation_label_sent_twice_is_refused_and_runs_nothing(gateway: int) -> None:  # noqa: F811
    body = json.dumps(call("tb__echo", {"text": "which label?"})).encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{gateway}\r\nAuthorization: Bearer {TOKEN}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: tb__echo\r\n"
            "X-Sentinel-Session: trip\r\nX-Sentinel-Session: other\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    got = _exchange(gateway, head + body)
    assert got.startswith(b"HTTP/1.1 400"), got[:200]
    answer: Any = json.loads(got.split(b"\r\n\r\n", 1)[1])
    assert "x-sentinel-session" in json.dumps(answer) and "result" not in answer


def _exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(data)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    return got
