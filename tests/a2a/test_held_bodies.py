"""A2A's HTTP binding counts the bytes of the request bodies it holds per caller and in all
(``core/held_bytes.py``): each body is bounded by ``max_frame_bytes``, and a caller opening connection after
connection, each sending a body without its last byte, is refused past 16 frames' worth at once (HTTP 429, a
JSON-RPC error), while another caller is served; what the connections held is given back when they close.
Real uvicorn on 127.0.0.1, raw sockets."""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
from urllib.parse import urlsplit

import pytest
from tests.a2a.a2a_rig import open_port, rpc, serve, user_message
from tests.a2a.test_streaming import echo_part

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)

KEYS = {"rover": "rover-key-1234", "drone": "drone-key-1234"}
FRAME = 1024
PART = 1000  # of a body announced as FRAME bytes: 16 of them fit a caller's share, the 17th does not


def _head(host: str, key: str, length: int) -> bytes:
    return (f"POST /a2a HTTP/1.1\r\nHost: {host}\r\nX-API-Key: {key}\r\nA2A-Version: 1.0\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n").encode()


def _status(sock: socket.socket) -> tuple[int, bytes]:
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        assert chunk, got
        got += chunk
    head, _, body = got.partition(b"\r\n\r\n")
    fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
    length = int(next((v for k, v in fields.items() if k.lower() == b"content-length"), b"0"))
    while len(body) < length:  # the body may come in a segment of its own
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(head.split()[1]), body


async def test_bodies_held_past_a_callers_share_are_refused_and_given_back(http):
    settings = A2ASettings(api_keys=KEYS, max_frame_bytes=FRAME)
    async with open_port() as port, serve(port, settings) as srv:
        where = urlsplit(srv.rpc_url)
        host, number = where.hostname or "127.0.0.1", where.port or 80
        held: list[socket.socket] = []

        def open_all() -> tuple[list[socket.socket], int, bytes]:
            for _ in range(17):
                s = socket.create_connection((host, number), timeout=15)
                s.sendall(_head(f"{host}:{number}", KEYS["rover"], FRAME) + b"{" + b" " * (PART - 1))
                held.append(s)
            ready, _, _ = select.select(held, [], [], 15)  # the one the server read last is refused
            status, body = _status(ready[0])
            return ready, status, body

        try:
            ready, status, body = await asyncio.to_thread(open_all)
            assert len(ready) == 1
            assert status == 429, (status, body)
            assert b"too many bytes" in body
            assert srv.service.held_bodies.held("rover") == 16 * PART
            # another caller is served meanwhile
            sent = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(echo_part("yes"))},
                             headers={"X-API-Key": KEYS["drone"], "A2A-Version": "1.0"})
            assert sent["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        finally:
            for s in held:
                with contextlib.suppress(OSError):
                    s.close()
        for _ in range(500):  # the server notices the connections gone in its own time
            if srv.service.held_bodies.held() == 0:
                break
            await asyncio.sleep(0.01)
        assert srv.service.held_bodies.held() == 0
        again = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(echo_part("again"))},
                          headers={"X-API-Key": KEYS["rover"], "A2A-Version": "1.0"})
        assert again["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert srv.service.held_bodies.held() == 0  # a request served whole gives back what it held


def test_a_refused_chunk_is_not_counted() -> None:
    from sentinel_mcp.core.held_bytes import HeldBytes

    held = HeldBytes(per_holder=10, total=15)
    assert held.take("a", 8) is None
    refused = held.take("a", 3)
    assert refused is not None and refused[0] == 429 and held.held("a") == 8
    refused = held.take("b", 8)  # within b's share, past the total
    assert refused is not None and refused[0] == 503 and held.held() == 8
    held.give_back("a", 8)
    assert held.held() == 0 and held.held("a") == 0
