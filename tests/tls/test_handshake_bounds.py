"""Handshakes under way are bounded (red team "tls", finding 1): every connection holds asyncio's TLS state (a
256 KiB read buffer) from its first byte to the end of its handshake, so a few thousand silent TCP
connections took gigabytes of the gateway's memory, and a failed handshake's state stayed in a reference
cycle until the next full collection. An address gets ``MAX_HANDSHAKES_PER_PEER`` at once (its newest: the
oldest gives way); past ``MAX_HANDSHAKES`` in all the address holding the most gives way, so other clients
still connect."""

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
        # the address keeps four handshakes: its newest (its oldest gave way to them, as a client sharing an
        # address with silent sockets must still get in: test_handshake_share_of_an_address.py)
        assert [await closed_by_server(r) for r, _ in flood[:2]] == [True, True]
        more = [await silent(port, "127.0.0.3") for _ in range(2)]
        await settle(acceptor, 6)
        assert acceptor.under_way == 6  # the bound in all
        # a client from another address still connects: the biggest holder gives up its oldest handshake
        ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
        async with httpx2.AsyncClient(verify=ctx, timeout=10) as client:
            answer = await client.get(f"https://127.0.0.1:{port}/")
        assert answer.text == "none"
        assert await closed_by_server(flood[2][0])  # the oldest left of the biggest holder
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


async def tls_from(port: int, source: str, pki: Any) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TLS connection whose handshake is done, that sends nothing more."""
    ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
    return await asyncio.open_connection("127.0.0.1", port, ssl=ctx, local_addr=(source, 0))


async def ended(reader: asyncio.StreamReader, wait: float = 0.3) -> bool:
    """Whether the server ended the connection (closed or reset) within ``wait`` seconds (all well inside
    uvicorn's keep-alive of 5 s, after which it closes an idle connection itself)."""
    try:
        return await asyncio.wait_for(reader.read(1), wait) == b""
    except (ConnectionError, ssl.SSLError):
        return True
    except asyncio.TimeoutError:
        return False


async def test_open_connections_are_bounded_per_address_and_in_all(pki, monkeypatch):
    """Red team "tls", finding 6: 3,000 idle TLS connections that never signed in took 670 MB (the buffer
    stays for as long as the connection does). An address keeps ``MAX_OPEN_PER_PEER`` open (its oldest that
    never began a request gives way to its newest: test_handshake_share_of_an_address.py); past ``MAX_OPEN``
    in all, the address holding the most gives up its oldest; a closed connection frees its place."""
    monkeypatch.setattr(acceptor_module, "MAX_OPEN_PER_PEER", 3)
    monkeypatch.setattr(acceptor_module, "MAX_OPEN", 5)
    async with served(pki) as (port, acceptor):
        flood = [await tls_from(port, "127.0.0.2", pki) for _ in range(4)]
        assert [await ended(r, 2 if i == 0 else 0.3) for i, (r, _) in enumerate(flood)] == [
            True, False, False, False]
        flood[1][1].close()  # one closes: its place is free again
        await asyncio.sleep(0.2)
        flood[1] = await tls_from(port, "127.0.0.2", pki)
        assert not await ended(flood[1][0])
        others = [await tls_from(port, "127.0.0.3", pki) for _ in range(2)]
        for _ in range(200):  # the server's side of the last handshake may still be finishing
            if acceptor.open_count() == 5:
                break
            await asyncio.sleep(0.01)
        assert acceptor.open_count() == 5  # the bound in all
        assert not await ended(flood[2][0], 0.05)  # still open, until another address needs its place
        ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
        async with httpx2.AsyncClient(verify=ctx, timeout=10) as client:  # another address still gets in
            answer = await client.get(f"https://127.0.0.1:{port}/")
        assert answer.text == "none"
        assert await ended(flood[2][0], 2)  # the biggest holder gave up its oldest connection
        assert not await ended(others[0][0])  # an address within its share keeps its connections
        for _, w in flood + others:
            w.close()


def test_refused_handshakes_are_logged_within_a_bound(monkeypatch, caplog):
    """A scanner's every refused handshake was a warning line (red team "tls"): the log is bounded as the
    audit is, REFUSALS_LOGGED one by one per window, then a count."""
    now = [1000.0]
    monkeypatch.setattr(acceptor_module.time, "monotonic", lambda: now[0])
    told: list[str | None] = []
    acceptor = TLSAcceptor(None, lambda peer, reason: told.append(peer))  # type: ignore[arg-type]
    refused = ssl.SSLCertVerificationError("certificate verify failed")
    refused.verify_message = "unable to get local issuer certificate"
    refused.reason = "CERTIFICATE_VERIFY_FAILED"
    with caplog.at_level("WARNING", logger=acceptor_module.__name__):
        for i in range(50):
            acceptor.handshake_failed(f"10.0.0.{i}", refused)
        lines = [r.getMessage() for r in caplog.records]
        assert len(lines) == acceptor_module.REFUSALS_LOGGED and len(told) == 50  # every one is audited
        now[0] += acceptor_module.REFUSAL_LOG_SECONDS
        acceptor.handshake_failed("10.0.1.1", refused)
        lines = [r.getMessage() for r in caplog.records]
    assert "30 more refused handshake(s)" in lines[-2] and "10.0.1.1" in lines[-1]
