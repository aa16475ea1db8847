"""2026-era ``subscriptions/listen`` streams are held against the caller's own share: a principal that keeps
many open (here one limited to a single tool) is refused past its share, while another principal's stream is
still acknowledged. The SDK's bound counts every caller together (1,024), so one principal filled it for all.

A real Sentinel over HTTP (the bookings server behind it), raw HTTP/1.1 listen requests on 127.0.0.1, the
share lowered to 3 through ``SENTINEL_CAP_LISTEN_STREAMS``."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.identity.identity_rig import ALICE, CAROL, http_sentinel, write_config

pytestmark = pytest.mark.timeout(120)

SHARE = 3


def _listen_request(port: int, token: str, rid: int) -> bytes:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen",
                       "params": {"notifications": {"toolsListChanged": True}, "_meta": meta}}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


class Stream:
    """One listen request on its own connection, held open until ``close``."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes) -> None:
        self.reader, self.writer, self.first = reader, writer, first

    @property
    def acknowledged(self) -> bool:
        return b"notifications/subscriptions/acknowledged" in self.first

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


async def _listen(port: int, token: str, rid: int) -> Stream:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_listen_request(port, token, rid))
    await writer.drain()
    seen = b""
    while b"acknowledged" not in seen and b'"error"' not in seen:
        chunk = await asyncio.wait_for(reader.read(4096), 20)
        assert chunk, f"connection closed without an answer: {seen!r}"
        seen += chunk
    return Stream(reader, writer, seen)


async def test_a_principal_holds_its_own_share_of_listen_streams(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTINEL_CAP_LISTEN_STREAMS", str(SHARE))
    with http_sentinel(write_config(tmp_path)) as (base, _proc):
        port = int(base.rsplit(":", 1)[1])
        held = [await _listen(port, CAROL, i) for i in range(SHARE)]
        assert all(s.acknowledged for s in held)
        refused = [await _listen(port, CAROL, 100 + i) for i in range(2)]
        for s in refused:
            assert not s.acknowledged
            assert b"too many listen streams for this caller" in s.first
        alice = await _listen(port, ALICE, 200)
        assert alice.acknowledged, alice.first  # another principal is not held up by carol's streams
        await held[0].close()
        for _ in range(50):  # the server learns of the closed stream a little later
            again = await _listen(port, CAROL, 300)
            if again.acknowledged:
                break
            await asyncio.sleep(0.1)
        assert again.acknowledged, "a closed stream's place was not given back"
        for s in [*held[1:], *refused, alice, again]:
            await s.close()
