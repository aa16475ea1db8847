"""A legacy SSE session whose client posts requests without reading its event stream is refused more requests
once ``MAX_WAITING`` of them wait for their answers to be written (429, a JSON-RPC error with the request's
id); once the client reads its stream, its requests are taken again. Before, every posted request was taken
(202) and its handler waited for the stream: 120,000 posted ``tools/list`` held 2.2 GB of the gateway's
memory.

A real Sentinel over HTTP (the bookings server), raw HTTP/1.1 on 127.0.0.1: the stream's socket reads nothing
after the endpoint event (a small receive buffer, so the kernel holds few answers)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest
from tests.identity.identity_rig import ALICE, http_sentinel, write_config

from sentinel_mcp.app.http_protocol import MAX_PIPELINED
from sentinel_mcp.app.sse_backlog import MAX_WAITING

pytestmark = pytest.mark.timeout(180)

POSTS = 6_000
WINDOW = MAX_PIPELINED // 2


def _post(port: int, sid: str, message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return (f"POST /messages/?session_id={sid} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {ALICE}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def _answers(reader: asyncio.StreamReader, count: int) -> list[tuple[int, bytes]]:
    """``count`` HTTP answers (status, body) from a connection the requests were pipelined on."""
    got: list[tuple[int, bytes]] = []
    while len(got) < count:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
        lines = head.decode("latin-1").split("\r\n")
        fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
        length = int(fields["content-length"])
        got.append((int(lines[0].split()[1]), await reader.readexactly(length)))
    return got


async def test_a_stream_nobody_reads_stops_taking_requests(tmp_path):
    with http_sentinel(write_config(tmp_path)) as (base, _proc):
        port = int(base.rsplit(":", 1)[1])
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        stream, stream_writer = await asyncio.open_connection(sock=sock, limit=4096)
        stream_writer.write(f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                            f"Authorization: Bearer {ALICE}\r\n\r\n".encode())
        seen = b""
        while b"session_id=" not in seen or not seen.split(b"session_id=")[1].count(b"\r\n"):
            seen += await asyncio.wait_for(stream.read(512), 20)
        sid = seen.split(b"session_id=")[1].split(b"\r\n")[0].decode()

        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        hello = {"protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "slow", "version": "1"}}
        posts = [_post(port, sid, {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": hello}),
                 _post(port, sid, {"jsonrpc": "2.0", "method": "notifications/initialized"})]
        posts += [_post(port, sid, {"jsonrpc": "2.0", "id": i, "method": "tools/list"}) for i in range(POSTS)]
        answers: list[tuple[int, bytes]] = []
        for start in range(0, len(posts), WINDOW):  # pipelined, within the front's bound per connection
            window = posts[start:start + WINDOW]
            writer.write(b"".join(window))
            await writer.drain()
            answers += await _answers(reader, len(window))
        refused = [(s, json.loads(b)) for s, b in answers if s == 429]
        taken = sum(1 for s, _ in answers if s == 202)
        assert refused, f"all {taken} requests were taken while nothing read the stream"
        assert taken < POSTS
        status, error = refused[0]
        assert isinstance(error["id"], int) and error["error"]["code"] == -32600
        assert f"{MAX_WAITING} requests of this session are waiting" in error["error"]["message"]

        async def read_stream() -> None:  # the client reads its answers now
            while await stream.read(65536):
                pass

        draining = asyncio.create_task(read_stream())
        for _ in range(100):
            writer.write(_post(port, sid, {"jsonrpc": "2.0", "id": "again", "method": "ping"}))
            [(status, _)] = await _answers(reader, 1)
            if status == 202:
                break
            await asyncio.sleep(0.1)
        assert status == 202, "requests stayed refused after the stream was read"
        draining.cancel()
        writer.close()
        stream_writer.close()
