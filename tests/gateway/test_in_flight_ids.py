"""On a handshake-era HTTP session, a request whose id names a stream the session has open (the same id again,
5 after "5", or the standalone GET stream's key "_GET_stream") is refused with a JSON-RPC error, and the
request in flight still gets its own answer; the standalone stream stays open. Before, the SDK's transport
(which keys streams by ``str(id)``) gave the newer request the older one's stream: one of them never got an
answer, or the GET stream was cut.

Real gateway (the lean tests' fixture, the toolbox upstream's ``held`` tool, in flight until the test lets
it answer), raw HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from tests.gateway.test_lean_calls import TOKEN, gateway  # noqa: F401 - the module's gateway fixture

pytestmark = pytest.mark.timeout(120)

HEADERS = {"Authorization": f"Bearer {TOKEN}", "Accept": "application/json, text/event-stream",
           "Content-Type": "application/json"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "ids", "version": "1"}}}


def _slow(rid: Any, seconds: float = 2.0) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "tb__slow", "arguments": {"seconds": seconds}}}


def _held(rid: Any, path: Path) -> dict[str, Any]:
    """The toolbox's ``held``: in flight until the test creates ``path`` + ".go"."""
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": "tb__held", "arguments": {"path": str(path)}}}


async def _started(path: Path) -> None:
    with anyio.fail_after(30):  # a guard against a hang, not a measurement
        while not path.exists():
            await anyio.sleep(0.01)


def _events(text: str) -> list[dict[str, Any]]:
    """The messages of an event stream, or the one message of a JSON answer (the server may answer either)."""
    if text.lstrip().startswith("{"):
        return [json.loads(text)]
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


async def _session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    opened = await http.post(url, json=INIT, headers=HEADERS)
    session = {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"],
               "Mcp-Protocol-Version": "2025-06-18"}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
    return session


# the dispatcher correlates ids as numbers where a string reads as one (coerce_request_id: "05", "+5", " 5",
# "5_0" and a digit of another script are ints to it): such a second id took the first call's entry, so a
# cancellation of the first cancelled the second and the first could no longer be cancelled
@pytest.mark.parametrize("first,second", [(5, "5"), ("5", 5), (7, 7), ("a", "a"), (5, "05"), ("05", 5),
                                          (5, "+5"), (5, " 5"), (50, "5_0"), (5, "\u0665"), ("007", "7")])
async def test_an_id_in_flight_is_refused_and_the_first_call_answered(gateway: int,  # noqa: F811
                                                                      first: Any, second: Any,
                                                                      tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{gateway}/mcp"
    held = tmp_path / "held"
    async with httpx2.AsyncClient(timeout=30) as http:
        session = await _session(http, url)
        running = asyncio.create_task(http.post(url, json=_held(first, held), headers=session))
        await _started(held)  # the first call is in flight: the upstream runs it
        try:
            again = await http.post(url, json=_slow(second, 0.1), headers=session)
        finally:
            held.with_name("held.go").touch()  # the first call answers now
        assert again.status_code == 400, again.text
        assert again.json()["id"] == second and "still in flight" in again.json()["error"]["message"]
        done = await running
        answers = [e for e in _events(done.text) if "result" in e or "error" in e]
        assert [a["id"] for a in answers] == [first] and "result" in answers[0], done.text
        assert answers[0]["result"]["content"][0]["text"] == "released", done.text
        later = await http.post(url, json=_slow(second, 0.1), headers=session)  # free again once answered
        assert [e["id"] for e in _events(later.text) if "result" in e] == [second], later.text


async def test_the_get_streams_key_is_not_a_request_id(gateway: int) -> None:  # noqa: F811
    url = f"http://127.0.0.1:{gateway}/mcp"
    async with httpx2.AsyncClient(timeout=30) as http:
        session = await _session(http, url)
        get = {k: v for k, v in session.items() if k != "Content-Type"}
        async with http.stream("GET", url, headers={**get, "Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            await asyncio.sleep(0.3)
            clash = await http.post(url, json=_slow("_GET_stream", 0.1), headers=session)
            assert clash.status_code == 400 and "still in flight" in clash.json()["error"]["message"]
            ping = await http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=session)
            assert ping.status_code == 200
            assert not stream.is_closed
