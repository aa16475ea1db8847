"""A peer's answer (its card, or a JSON-RPC reply) is read with bounds: a declared Content-Length over the
limit is refused before the body, reading stops once the limit is passed (chunked, close-delimited, gzip
bomb), and the whole exchange has one deadline (a peer that trickles cannot hold it open)."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator

import httpx2
import pytest
from tests.a2a.raw_listener import listening

from sentinel_mcp.a2a import card_fetch
from sentinel_mcp.a2a.discovery import PeerRejected, verify_peer
from sentinel_mcp.a2a.peer_client import PeerError, call_peer

BODY = 128 << 20  # what the hostile peer offers to send (an unbounded reader would take it all)
SENT_AT_MOST = 24 << 20  # the limit, plus what socket buffers hold before the reader stops
CHUNK = b"x" * 65536


class HostilePeer:
    """A raw HTTP server answering each path in one hostile way; ``sent`` counts the body bytes written."""

    def __init__(self) -> None:
        self.sent = 0
        self.port = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            path = head.split(" ", 2)[1]
            length = next((int(ln.split(":", 1)[1]) for ln in head.split("\r\n")
                           if ln.lower().startswith("content-length:")), 0)
            await reader.readexactly(length)
            await self.answer(path, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        await writer.drain()
        self.sent += len(data)

    async def answer(self, path: str, writer: asyncio.StreamWriter) -> None:
        ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        if path.startswith("/declared"):  # says how big, then sends it
            writer.write(f"{ok}Content-Length: {BODY}\r\n\r\n".encode())
            while self.sent < BODY:
                await self.send(writer, CHUNK)
        elif path.startswith("/chunked"):
            writer.write(f"{ok}Transfer-Encoding: chunked\r\n\r\n".encode())
            while self.sent < BODY:
                await self.send(writer, b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK))
            writer.write(b"0\r\n\r\n")
        elif path.startswith("/unsized"):  # no length: the body ends when the connection closes
            writer.write(f"{ok}Connection: close\r\n\r\n".encode())
            while self.sent < BODY:
                await self.send(writer, CHUNK)
        elif path.startswith("/bomb"):  # small on the wire, large once decoded
            packed = gzip.compress(b"\0" * (64 << 20), compresslevel=9)
            writer.write(f"{ok}Content-Encoding: gzip\r\nContent-Length: {len(packed)}\r\n\r\n".encode())
            await self.send(writer, packed)
        elif path.startswith("/trickle"):  # a byte at a time, each well within the read timeout
            writer.write(f"{ok}Content-Length: 100\r\n\r\n".encode())
            for _ in range(100):
                await self.send(writer, b" ")
                await asyncio.sleep(0.1)


@pytest.fixture
async def peer() -> AsyncIterator[HostilePeer]:
    async with listening(HostilePeer()) as hostile:
        yield hostile


TXT_LOOPBACK = {"tls": "0"}


@pytest.mark.parametrize("path", ["/declared", "/chunked", "/unsized", "/bomb"])
async def test_an_oversize_card_is_not_read_past_the_limit(peer: HostilePeer, path: str) -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="larger than"):
            card = {**TXT_LOOPBACK, "path": f"{path}/agent-card.json"}  # (a card's path: the peer's choice)
            await verify_peer("big", ["127.0.0.1"], peer.port, card, http,
                              allow_loopback_plaintext=True)
    assert peer.sent < SENT_AT_MOST


@pytest.mark.parametrize("path", ["/declared", "/chunked", "/unsized", "/bomb"])
async def test_an_oversize_rpc_answer_is_not_read_past_the_limit(peer: HostilePeer, path: str) -> None:
    with pytest.raises(PeerError, match="larger than"):
        await call_peer(f"http://127.0.0.1:{peer.port}{path}", "GetTask", {"id": "t"}, timeout=30)
    assert peer.sent < SENT_AT_MOST


async def test_a_trickling_card_meets_the_whole_exchanges_deadline(
    peer: HostilePeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(card_fetch, "CARD_DEADLINE", 0.3)  # the trickle takes 10 s (100 bytes, 0.1 s apart)
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="within"):
            await verify_peer("slow", ["127.0.0.1"], peer.port,
                              {**TXT_LOOPBACK, "path": "/trickle/agent-card.json"}, http,
                              allow_loopback_plaintext=True)
    assert peer.sent < 100


async def test_a_trickling_rpc_answer_meets_the_whole_exchanges_deadline(peer: HostilePeer) -> None:
    with pytest.raises(PeerError, match="within"):
        await call_peer(f"http://127.0.0.1:{peer.port}/trickle", "GetTask", {"id": "t"}, timeout=0.3)
    assert peer.sent < 100


async def test_a_small_answer_within_the_limit_still_reads(peer: HostilePeer) -> None:
    """The bound is the limit, not less: an answer just under it is read whole."""

    async def answer(path: str, writer: asyncio.StreamWriter) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": "1", "result": {"pad": "y" * 2000}}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()

    peer.answer = answer  # type: ignore[method-assign]
    result = await call_peer(f"http://127.0.0.1:{peer.port}/a2a", "GetTask", {"id": "t"}, max_bytes=2100)
    assert result == {"pad": "y" * 2000}
    with pytest.raises(PeerError, match="larger than 2000"):
        await call_peer(f"http://127.0.0.1:{peer.port}/a2a", "GetTask", {"id": "t"}, max_bytes=2000)


HOSTILE_ANSWERS = {
    "deep": b'{"jsonrpc":"2.0","id":"1","result":' + b"[" * 200_000 + b"]" * 200_000 + b"}",
    "nested": b'{"jsonrpc":"2.0","id":"1","result":{"task":' + b'{"a":' * 500 + b"1" + b"}" * 500 + b"}}",
    "huge-int": b'{"jsonrpc":"2.0","id":"1","result":' + b"9" * 100_000 + b"}",
    "nan": b'{"jsonrpc":"2.0","id":"1","result":{"task":{"x":NaN}}}',
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_ANSWERS))
async def test_a_hostile_rpc_answer_is_a_peer_error_not_a_parser_crash(peer: HostilePeer, kind: str) -> None:
    """Within the size limit, a peer's answer still meets the limits Sentinel holds its own callers to."""

    async def answer(path: str, writer: asyncio.StreamWriter) -> None:
        body = HOSTILE_ANSWERS[kind]
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()

    peer.answer = answer  # type: ignore[method-assign]
    with pytest.raises(PeerError, match="not usable JSON"):
        await call_peer(f"http://127.0.0.1:{peer.port}/a2a", "GetTask", {"id": "t"})


async def test_a_peers_error_is_shown_with_its_hidden_characters_visible(peer: HostilePeer) -> None:
    async def answer(path: str, writer: asyncio.StreamWriter) -> None:
        error = {"code": "\x1b[2J", "message": "\x1b]0;owned\x07\u202e" + "m" * 10_000}
        body = json.dumps({"jsonrpc": "2.0", "id": "1", "error": error}).encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(body), body))
        await writer.drain()

    peer.answer = answer  # type: ignore[method-assign]
    with pytest.raises(PeerError) as refused:
        await call_peer(f"http://127.0.0.1:{peer.port}/a2a", "GetTask", {"id": "t"})
    said = str(refused.value)
    assert refused.value.code is None and "\x1b" not in said and "\u202e" not in said and len(said) < 1000
