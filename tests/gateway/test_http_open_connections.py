"""The HTTP front's bound on open connections (``app/open_connections.py``), against a real gateway in a
subprocess. Every local client shares 127.0.0.1: a flood of silent connections from it cannot keep a newcomer
out (the address's oldest connection between requests gives way), past the bound in all the address holding
the most gives way, a connection with a request begun is never cut, and only when none can give way is a new
connection refused 503 with ``connection: close``."""

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


def begin(port: int, text: str, source: str = "127.0.0.1") -> tuple[socket.socket, bytes]:
    """A connection with a request begun (its head's first bytes sent), and the rest of that request."""
    body = echo(text)
    whole = head(port, length=len(body)) + body
    sock = connect(port, source)
    sock.sendall(whole[:12])
    return sock, whole[12:]


def finish(sock: socket.socket, rest: bytes) -> tuple[int, Any]:
    sock.sendall(rest)
    got = b""
    while not parse(got):
        chunk = sock.recv(65536)
        assert chunk, f"closed before the answer: {got[:200]!r}"
        got += chunk
    return parse(got)[0]


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def served(port: int, text: str, source: str = "127.0.0.1") -> socket.socket:
    """A new connection, one call answered on it (the server has handled everything sent before it)."""
    sock = connect(port, source)
    status, answer = call_on(sock, port, text)
    assert status == 200 and answer["result"]["content"][0]["text"] == text, answer
    return sock


def test_a_flood_from_the_address_cannot_keep_a_newcomer_out(capped: int) -> None:
    busy, rest = begin(capped, "busy")
    held: list[socket.socket] = [busy]
    try:
        held.append(served(capped, "probe"))  # after it, the server has read the busy request's first bytes
        silent = [connect(capped) for _ in range(PER_PEER - 2)]  # 127.0.0.1 at its bound
        held += silent
        for i in range(PER_PEER + 2):  # more newcomers than the address has places: each one is served
            held.append(served(capped, f"newcomer {i}"))
        # the oldest connections between requests gave way (the probe's, then the silent ones)...
        assert closed_by_server(held[1]) and all(closed_by_server(s) for s in silent)
        # ...and the begun request never did: it is answered
        status, answer = finish(busy, rest)
        assert status == 200 and answer["result"]["content"][0]["text"] == "busy", answer
    finally:
        for sock in held:
            sock.close()


def test_past_the_bound_in_all_the_biggest_holder_gives_way(capped: int) -> None:
    held: list[socket.socket] = []
    try:
        held += [connect(capped) for _ in range(PER_PEER)]  # 127.0.0.1: its bound, silent
        held += [served(capped, f"two {i}", "127.0.0.2") for i in range(TOTAL - PER_PEER)]  # the bound in all
        newcomer = served(capped, "three", "127.0.0.3")  # the biggest holder's oldest gave way to it
        held.append(newcomer)
        assert closed_by_server(held[0])
        for sock in held[PER_PEER:PER_PEER + TOTAL - PER_PEER]:  # the other address's connections: untouched
            status, _ = call_on(sock, capped, "still")
            assert status == 200
    finally:
        for sock in held:
            sock.close()


def test_when_every_connection_is_busy_a_newcomer_is_refused_and_none_is_cut(capped: int) -> None:
    begun = [begin(capped, f"busy {i}") for i in range(PER_PEER)]  # 127.0.0.1: its bound, each reading
    try:
        served(capped, "sync", "127.0.0.2").close()  # the server has read every begun request's bytes
        for _ in range(3):
            got = refused(capped)
            assert is_503_close(got), got[:200]
        for i, (sock, rest) in enumerate(begun):
            status, answer = finish(sock, rest)
            assert status == 200 and answer["result"]["content"][0]["text"] == f"busy {i}", answer
    finally:
        for sock, _ in begun:
            sock.close()
    # places come back once the connections end (bounded by count, not time)
    for _ in range(100):
        try:
            served(capped, "after").close()
            break
        except (AssertionError, OSError):
            time.sleep(0.05)
    else:
        pytest.fail("new connections were never taken again")


class _Conn:
    """A connection's protocol as the count sees it: between requests or not, and whether it gave way."""

    def __init__(self, idle: bool = True) -> None:
        self.cycle = None if idle else True
        self.gave_way = False

    def give_way(self) -> None:
        self.gave_way = True


def test_places_are_counted_per_holder_and_given_way_oldest_first() -> None:
    counts = OpenConnections(max_total=3, max_per_peer=2)
    a1, a2, a3, a4, b1, c1 = _Conn(), _Conn(idle=False), _Conn(), _Conn(), _Conn(), _Conn(idle=False)
    assert counts.take("10.0.0.1", a1) and counts.take("10.0.0.1", a2)
    assert counts.take("10.0.0.1", a3) and a1.gave_way and not a2.gave_way  # its oldest idle gave way
    assert counts.take("10.0.0.1", a4) and a3.gave_way and counts.by_peer["10.0.0.1"] == [a2, a4]
    counts.give_back("10.0.0.1", a1)  # a connection that gave way is counted no more
    assert counts.total == 2
    assert counts.take("10.0.0.2", b1) and counts.total == 3
    assert counts.take("10.0.0.3", c1) and a4.gave_way and counts.total == 3  # past the bound in all
    assert not counts.take("10.0.0.3", _Conn())  # each left is busy, or alone with its holder's busy one
    assert not b1.gave_way and not a2.gave_way
    for who, conn in (("10.0.0.1", a2), ("10.0.0.2", b1), ("10.0.0.3", c1)):
        counts.give_back(who, conn)
    assert counts.total == 0 and counts.by_peer == {}
    # one host's IPv6 addresses are one holder (its /64)
    v6 = OpenConnections(max_total=10, max_per_peer=1)
    first, second = _Conn(idle=False), _Conn(idle=False)
    assert v6.take("2001:db8::1", first) and not v6.take("2001:db8::2", second)


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


def test_an_address_is_read_once_not_once_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client opening a connection a request (as urllib does) had its address parsed twice a connection
    (``ipaddress``: ~60 Python calls, on the event loop); now once an address. Past the cache's bound (a peer
    may churn IPv6 addresses) each is read again and the holder is the same: one host's /64 is one holder."""
    import ipaddress

    from sentinel_mcp.core import connection_share

    parsed: list[str] = []

    class _Counted:
        IPv6Address = ipaddress.IPv6Address

        @staticmethod
        def ip_address(text: str) -> Any:
            parsed.append(text)
            return ipaddress.ip_address(text)

        ip_network = staticmethod(ipaddress.ip_network)

    monkeypatch.setattr(connection_share, "ipaddress", _Counted)
    getattr(connection_share.holder, "cache_clear", lambda: None)()  # (none before: read every time)
    counts = OpenConnections(max_total=10, max_per_peer=2)
    for _ in range(1000):
        conn = _Conn()
        assert counts.take("10.9.8.7", conn)
        counts.give_back("10.9.8.7", conn)
    assert parsed == ["10.9.8.7"] and counts.total == 0
    held = [_Conn(idle=False) for _ in range(2)]
    assert counts.take("2001:db8::1", held[0]) and counts.take("2001:db8::2", held[1])
    for i in range(3000):  # past the cache's bound: the same /64 still one holder, at its bound
        assert not counts.take(f"2001:db8::{i + 3:x}", _Conn(idle=False))
    assert len(parsed) == 3003
