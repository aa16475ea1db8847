"""The HTTP front's bound on open connections (``app/open_connections.py``), against a real gateway in a
subprocess: an unauthenticated flood of silent connections, from one address and then from another, is
refused 503 with ``connection: close`` past the bound (per address, then in all), the owner's connection
already open is served throughout, and once the flood's connections end the owner's new connections are
served again."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import pytest

from sentinel_mcp.app.open_connections import OpenConnections
from tests.gateway.test_http_framing import echo, head, parse
from tests.gateway.test_lean_calls import TOKEN

pytestmark = pytest.mark.timeout(120)
TOTAL, PER_PEER = 8, 5


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A gateway whose bounds on open connections are low (TOTAL, PER_PEER); a head may take long (120 s),
    so the flood's silent connections stay open for the whole test, however slow the machine."""
    import os
    import subprocess
    import sys

    from tests.conftest import free_port, stop_process, wait_http
    from tests.gateway.helpers import TOOLBOX

    tmp = tmp_path_factory.mktemp("capped")
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN}}}))
    port = free_port()
    env = {**os.environ, "SENTINEL_CAP_HTTP_CONNECTIONS": str(TOTAL),
           "SENTINEL_CAP_HTTP_CONNECTIONS_PER_PEER": str(PER_PEER), "SENTINEL_CAP_HTTP_HEAD_SECONDS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
        yield port
    finally:
        stop_process(proc)


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket()
    sock.settimeout(15)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


def call_on(sock: socket.socket, port: int, text: str) -> tuple[int, Any]:
    """One authenticated tools/call on an open (kept-alive) connection, and its answer."""
    body = echo(text)
    sock.sendall(head(port, length=len(body)) + body)
    got = b""
    while not parse(got):
        chunk = sock.recv(65536)
        assert chunk, f"closed before the answer: {got[:200]!r}"
        got += chunk
    return parse(got)[0]


def refused(port: int, source: str = "127.0.0.1") -> bytes:
    """What a connection past the bound gets, read before sending anything: all of it, up to the close."""
    sock = connect(port, source)
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return got


def is_503_close(got: bytes) -> bool:
    top = got.partition(b"\r\n\r\n")[0].lower()
    return top.startswith(b"http/1.1 503 ") and b"\r\nconnection: close" in top


def test_a_flood_past_the_bound_is_refused_and_the_owner_served(capped: int) -> None:
    owner = connect(capped)
    flood: list[socket.socket] = []
    try:
        status, answer = call_on(owner, capped, "before")
        assert status == 200 and answer["result"]["content"][0]["text"] == "before"
        flood += [connect(capped) for _ in range(PER_PEER - 1)]  # 127.0.0.1 at its bound, the owner's too
        for _ in range(5):  # each one more from that address: refused, closed, nothing of it read
            got = refused(capped)
            assert is_503_close(got), got[:200]
        flood += [connect(capped, "127.0.0.2") for _ in range(TOTAL - PER_PEER)]  # the bound in all
        for _ in range(5):
            got = refused(capped, "127.0.0.3")  # an address with none open: past the bound in all
            assert is_503_close(got), got[:200]
        # the owner's kept-alive connection is served throughout
        for i in range(3):
            status, answer = call_on(owner, capped, f"during {i}")
            assert status == 200 and answer["result"]["content"][0]["text"] == f"during {i}", answer
    finally:
        for sock in flood:
            sock.close()
    try:
        # the flood ended: a new connection is taken again (once the server has read their ends; bounded by
        # count, not time)
        for _ in range(100):
            fresh = connect(capped)
            try:
                status, answer = call_on(fresh, capped, "after")
            except (AssertionError, OSError):  # refused still (closed under the request)
                status, answer = 0, None
            if status == 200:
                break
            fresh.close()
            time.sleep(0.05)
        else:
            pytest.fail("new connections were never taken again after the flood ended")
        with fresh:
            assert status == 200 and answer["result"]["content"][0]["text"] == "after"
            # all of the places came back: as many connections as the bound allows are taken at once
            others = [connect(capped) for _ in range(PER_PEER - 2)]
            try:
                for i, sock in enumerate(others):
                    status, answer = call_on(sock, capped, f"again {i}")
                    assert status == 200, answer
            finally:
                for sock in others:
                    sock.close()
        status, _ = call_on(owner, capped, "last")
        assert status == 200
    finally:
        owner.close()


def test_places_are_counted_per_address_and_in_all() -> None:
    counts = OpenConnections(max_total=3, max_per_peer=2)
    assert counts.take("a") and counts.take("a") and not counts.take("a")
    assert counts.take("b") and not counts.take("c")
    counts.give_back("a")
    assert counts.take("c") and not counts.take("a")
    for peer in ("a", "b", "c"):
        counts.give_back(peer)
    assert counts.total == 0 and counts.by_peer == {}


async def test_a_connection_upgraded_to_a_websocket_keeps_its_place_and_gives_it_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A WebSocket's connection began as HTTP: its place goes with it, and comes back when it ends (the HTTP
    protocol never hears of that end: counted there alone, each upgrade would hold its place for ever)."""
    import asyncio

    import websockets

    from sentinel_mcp.app import open_connections
    from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
    from sentinel_mcp.app.ws_protocol import FrontWebSocketProtocol
    from tests.support.served_app import served_app

    monkeypatch.setattr(open_connections, "MAX_PER_PEER", 2)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()
        await send({"type": "websocket.accept"})
        while (await receive())["type"] == "websocket.receive":
            await send({"type": "websocket.send", "text": "pong"})

    def refused_now(port: int) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
            return sock.recv(65536)

    async with served_app(lambda port: app, http=FrontHTTPProtocol, ws=FrontWebSocketProtocol) as port:
        url = f"ws://127.0.0.1:{port}/ws"
        for _ in range(6):  # more upgrades, one after another, than the address has places
            async with websockets.connect(url) as ws:
                await ws.send("ping")
                assert await ws.recv() == "pong"
        async with websockets.connect(url) as one, websockets.connect(url) as two:
            got = await asyncio.to_thread(refused_now, port)  # both places held by WebSockets
            assert is_503_close(got), got[:200]
            await one.send("ping")
            assert await one.recv() == "pong"
            await two.send("ping")
            assert await two.recv() == "pong"
