"""Handshakes under way are bounded (red team "tls", finding 1): every connection holds asyncio's TLS state (a
256 KiB read buffer) from its first byte to the end of its handshake, so a few thousand silent TCP
connections took gigabytes of the gateway's memory, and a failed handshake's state stayed in a reference
cycle until the next full collection. An address gets ``MAX_HANDSHAKES_PER_PEER`` at once; past
``MAX_HANDSHAKES`` in all the address holding the most gives way, so other clients still connect."""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import contextlib
import gc
import ssl
from typing import Any, AsyncIterator

import httpx2
from tests.tls.tls_rig import front_in_process

from sentinel_mcp.tls import acceptor as acceptor_module
from sentinel_mcp.tls.acceptor import TLSAcceptor
from sentinel_mcp.tls.server_context import FrontTLS


@contextlib.asynccontextmanager
async def served(pki: Any) -> AsyncIterator[tuple[int, TLSAcceptor]]:
    async with front_in_process(FrontTLS(pki.server.cert, pki.server.key, handshake_timeout=30)) as front:
        yield front


async def silent(port: int, source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TCP connection that starts no handshake (it sends nothing)."""
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 2) == b""
    except (asyncio.TimeoutError, ConnectionError):
        return False


async def settle(acceptor: TLSAcceptor, count: int) -> None:
    for _ in range(200):
        if acceptor.under_way == count:
            return
        await asyncio.sleep(0.01)


async def test_an_address_gets_its_share_of_handshakes_and_a_flood_gives_way(pki, monkeypatch):
    monkeypatch.setattr(acceptor_module, "MAX_HANDSHAKES_PER_PEER", 4)
    monkeypatch.setattr(acceptor_module, "MAX_HANDSHAKES", 6)
    async with served(pki) as (port, acceptor):
        flood = [await silent(port, "127.0.0.2") for _ in range(6)]
        await settle(acceptor, 4)
        assert acceptor.under_way == 4
        # the address's first four wait for their handshake; the next ones are closed at once
        assert [await closed_by_server(r) for r, _ in flood[4:]] == [True, True]
        more = [await silent(port, "127.0.0.3") for _ in range(2)]
        await settle(acceptor, 6)
        assert acceptor.under_way == 6  # the bound in all
        # a client from another address still connects: the biggest holder gives up its oldest handshake
        ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
        async with httpx2.AsyncClient(verify=ctx, timeout=10) as client:
            answer = await client.get(f"https://127.0.0.1:{port}/")
        assert answer.text == "none"
        assert await closed_by_server(flood[0][0])
        assert not await closed_by_server(more[0][0])  # an address within its share keeps its handshakes
        for _, w in flood + more:
            w.close()


async def test_a_failed_handshake_leaves_no_tls_state_behind(pki):
    """Without a full collection (the gateway seldom runs one), refused handshakes free their TLS state."""
    async with served(pki) as (port, acceptor):
        gc.collect()
        gc.disable()
        try:
            for _ in range(20):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # plaintext: the handshake fails
                await reader.read()
                writer.close()
            for _ in range(200):
                if not acceptor.pending:
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)
            left = [o for o in gc.get_objects() if isinstance(o, asyncio.sslproto.SSLProtocol)]
            assert left == []
        finally:
            gc.enable()
