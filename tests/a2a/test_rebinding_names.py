"""DNS rebinding: a name that resolves to a public address when it is checked and to 127.0.0.1 when it is
connected to would aim Sentinel at this machine's own services. It cannot happen here, because no check
resolves a name:

- an announced peer is fetched from (and sent to: ``test_card_url_spelling_sends``) the address literal that
  was checked against ``peer_networks`` (``untrusted_address``): no name is looked up at all;
- a listed peer's name (the owner's URL) is judged by its spelling: plaintext only for a loopback literal or
  ``localhost`` (``stays_here``), else TLS whose certificate must name it. Where the name resolves at
  connect time is the resolver's word, asked once, by the connection itself: a local service there gets a
  TLS ClientHello, never a request.

A fake resolver (``socket.getaddrinfo``, which the event loop's resolver calls) answers 127.0.0.1 for every
name and records what it was asked; real TCP listeners on 127.0.0.1 record what reached them."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from tests.a2a.lan_announcer import HERE, Rig, announced, lan_rig, packet, service
from tests.a2a.raw_listener import listening

from sentinel_mcp.a2a.card_fetch import NO_CARD, PeerRejected
from sentinel_mcp.a2a.card_signature import NO_KEYS
from sentinel_mcp.a2a.listed_peer_card import verify_listed

pytestmark = pytest.mark.timeout(60)


class Recording:
    """A local service: what each connection sent first."""

    def __init__(self) -> None:
        self.port = 0
        self.first: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            self.first.append(await asyncio.wait_for(reader.read(5), 5))
        except (OSError, TimeoutError):
            self.first.append(b"")
        writer.close()


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every name resolves to 127.0.0.1 (the rebinding's second answer); the names asked are listed."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        asked.append(name)
        return real("127.0.0.1", *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    yield asked


@pytest.fixture
async def announcer() -> AsyncIterator[Rig]:
    async for r in lan_rig():
        yield r


async def test_an_announced_peer_is_fetched_from_the_checked_address_with_no_lookup(
        announcer: Rig, resolver: list[str]) -> None:
    async with listening(Recording()) as local:
        peer = announced(local.port)
        announcer.hear(packet(*service(peer), *peer.dns_addresses()), HERE)
        assert await announcer.verdict(peer.name) == NO_CARD
        assert local.first and local.first[0].startswith(b"GET"), local.first  # reached, at the address
    assert resolver == [], resolver


async def test_a_listed_name_that_rebinds_to_loopback_gets_a_tls_hello_at_most(resolver: list[str]) -> None:
    async with listening(Recording()) as local, httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="plaintext beyond loopback"):
            await verify_listed("book", f"http://peer.example:{local.port}/a2a", http, keys=NO_KEYS,
                                allow_loopback_plaintext=True)
        assert resolver == [] and local.first == []  # refused by its spelling: not looked up, not reached
        with pytest.raises(PeerRejected, match="card fetch failed"):
            await verify_listed("book", f"https://peer.example:{local.port}/a2a", http, keys=NO_KEYS)
        # looked up once, by the connection; what reached the local service is a TLS handshake record
        assert resolver == ["peer.example"], resolver
        assert len(local.first) == 1 and local.first[0][:1] == b"\x16", local.first
