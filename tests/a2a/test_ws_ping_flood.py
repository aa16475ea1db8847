"""A WebSocket peer that sends pings and never reads the pongs is not read either once the pongs it owes a
read pile up: the server's buffer of unsent pongs stays bounded (flow control), where before the server read
pings for ever and kept a pong for each in memory. A peer that reads is served as before."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
from typing import Any

import pytest
from tests.a2a.a2a_rig import open_port, serve
from tests.conftest import free_port
from tests.gateway.test_http_front_peer import _innermost_replaced

from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.app.serve import http_server
from sentinel_mcp.config import parse_config

pytestmark = pytest.mark.timeout(60)

FLOOD = 48 << 20  # bytes of pings: far past what the kernel's socket buffers hold on both ends


def _ping() -> bytes:
    payload = os.urandom(125)  # a control frame's largest payload
    mask = os.urandom(4)
    return b"\x89" + bytes([0x80 | 125]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _upgrade(sock: socket.socket, port: int) -> None:
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /a2a/ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nA2A-Version: 1.0\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 101"), head[:200]


def _flood(port: int) -> int:
    """Bytes of pings the server took before it stopped reading (FLOOD if it never did)."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        _upgrade(sock, port)
        sock.settimeout(3.0)  # the server stopped reading: the send blocks, and times out
        chunk = _ping() * 512
        sent = 0
        try:
            while sent < FLOOD:
                sent += sock.send(chunk)
        except TimeoutError:
            pass
        return sent


async def test_a_peer_that_never_reads_its_pongs_is_not_read_for_ever():
    async with open_port() as port, serve(port, A2ASettings()) as srv:
        host_port = int(srv.base_url.rsplit(":", 1)[1])
        sent = await asyncio.to_thread(_flood, host_port)
        assert sent < FLOOD, f"the server read {sent} bytes of pings it could not answer"



async def test_the_gateways_own_server_stops_reading_such_a_peer(tmp_path):
    """The front's protocols as ``app/serve.py`` runs them (its HTTP protocol hands the upgrade over), with
    Sentinel's app replaced by one that accepts a WebSocket and waits."""
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path / "data"), "builtins": [],
                                                          "http": {"token": "flood-test-token-0123456789"}}})
    server = http_server(config, "127.0.0.1", free_port())
    server.config.lifespan = "off"  # nothing of Sentinel's app starts
    server.config.load()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        assert scope["type"] == "websocket"
        await receive()
        await send({"type": "websocket.accept"})
        while (await receive())["type"] != "websocket.disconnect":
            pass

    server.config.loaded_app = _innermost_replaced(server.config.loaded_app, app)
    server.lifespan = server.config.lifespan_class(server.config)
    await server.startup()
    try:
        port = server.servers[0].sockets[0].getsockname()[1]
        sent = await asyncio.to_thread(_flood, port)
        assert sent < FLOOD, f"the server read {sent} bytes of pings it could not answer"
    finally:
        await server.shutdown()
