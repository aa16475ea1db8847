"""An announcement chooses the address and port of the card fetch: what that fetch shows and what its failure
tells are bounded. Sentinel's client certificate (``peer_tls``) is not shown to the host there (a card is
public; the certificate goes out in the handshake before a pin is checked and, under TLS 1.2, in the clear),
and the rejection kept and shown to the model reads the same whether the port refused the connection,
answered HTTP 404 or served something else: "refused" against "404" is a port scan done for the announcer.
Real TLS with a local CA, real zeroconf listener (``lan_announcer.py``), real TCP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import free_port
from tests.a2a.lan_announcer import HERE, announced, packet, rig_with, service

from sentinel_mcp.a2a.card_fetch import NO_CARD
from sentinel_mcp.a2a.discovery import txt_record
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.tls.authority import LocalCA
from sentinel_mcp.tls.settings import ClientTLS

pytestmark = pytest.mark.timeout(60)
TLS_TXT = {**txt_record(A2ASettings()), "tls": "1"}


class Asking:
    """A TLS server that asks for a client certificate (optional) and notes whether one came."""

    def __init__(self, ctx: ssl.SSLContext, answer: bytes) -> None:
        self.ctx, self.answer = ctx, answer
        self.port = 0
        self.shown: list[bool] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.shown.append(bool(writer.get_extra_info("peercert")))
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(self.answer)
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        writer.close()


def _server_context(ca: LocalCA, *, required: bool = False,
                    newest: ssl.TLSVersion = ssl.TLSVersion.MAXIMUM_SUPPORTED) -> tuple[ssl.SSLContext, str]:
    """A server context (its certificate's SHA-256 beside it) asking for a client certificate."""
    server = ca.issue_server(["localhost"], ["127.0.0.1"])
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(server.cert, server.key)
    ctx.load_verify_locations(ca.ca_cert_path)
    ctx.verify_mode = ssl.CERT_REQUIRED if required else ssl.CERT_OPTIONAL
    ctx.maximum_version = newest
    return ctx, server.sha256


async def _serving(handler: Any) -> Any:
    server = await asyncio.start_server(handler.handle, "127.0.0.1", 0, ssl=handler.ctx)
    handler.port = server.sockets[0].getsockname()[1]
    return server


async def test_the_card_fetch_of_an_announced_address_shows_no_client_certificate(tmp_path: Path) -> None:
    ca = LocalCA(tmp_path / "ca")
    ca.create()
    me = ca.issue_client("sentinel-a")
    tls = ClientTLS(ca=str(ca.ca_cert_path), cert=str(me.cert), key=str(me.key))
    asking = Asking(_server_context(ca)[0], b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
    server = await _serving(asking)
    try:
        async with rig_with(tls) as rig:
            peer = announced(asking.port, txt=TLS_TXT)
            rig.hear(packet(*service(peer), *peer.dns_addresses()), HERE)
            assert await rig.verdict(peer.name) == NO_CARD
        assert asking.shown == [False], asking.shown  # reached (the CA checks out), no certificate shown
        # the control: the same client settings, used where the owner listed the peer, show it
        import httpx2
        from sentinel_mcp.tls.client_context import httpx_verify

        async with httpx2.AsyncClient(verify=httpx_verify(tls)) as http:
            await http.get(f"https://127.0.0.1:{asking.port}/")
        assert asking.shown == [False, True], asking.shown
    finally:
        server.close()


@pytest.mark.parametrize("case", ["pinned", "wrong pin", "TLS 1.2"])
async def test_a_server_requiring_a_certificate_gets_it_only_once_it_proved_itself(tmp_path: Path,
                                                                                   case: str) -> None:
    """A peer whose front requires a client certificate (TLS 1.3: it says so after the handshake, once its
    own certificate, name and pin checked out) is fetched from again with it; a server whose pin is wrong,
    or one that requires it inside a TLS 1.2 handshake (before proving anything), never receives it (the
    handler runs only for a handshake the server finished: one where a certificate came)."""
    ca = LocalCA(tmp_path / "ca")
    ca.create()
    me = ca.issue_client("sentinel-a")
    newest = ssl.TLSVersion.TLSv1_2 if case == "TLS 1.2" else ssl.TLSVersion.MAXIMUM_SUPPORTED
    ctx, sha256 = _server_context(ca, required=True, newest=newest)
    pin = "00" * 32 if case == "wrong pin" else sha256
    tls = ClientTLS(ca=str(ca.ca_cert_path), cert=str(me.cert), key=str(me.key), pin_sha256=[pin])
    asking = Asking(ctx, b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
    server = await _serving(asking)
    try:
        async with rig_with(tls) as rig:
            peer = announced(asking.port, txt=TLS_TXT)
            rig.hear(packet(*service(peer), *peer.dns_addresses()), HERE)
            assert await rig.verdict(peer.name) == NO_CARD
            detail = rig.registry.rejections(owner=True)[peer.name]
        if case == "pinned":
            assert asking.shown == [True] and "HTTP 404" in detail, (asking.shown, detail)
        else:
            assert asking.shown == [], (asking.shown, detail)
    finally:
        server.close()


async def test_a_refused_port_a_404_and_a_non_card_read_the_same(tmp_path: Path) -> None:
    async def plain(answer: bytes) -> Any:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(answer)
                await writer.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            writer.close()
        return await asyncio.start_server(handle, "127.0.0.1", 0)

    not_found = await plain(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
    not_a_card = await plain(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: 2\r\n\r\n[]")
    hangs_up = await plain(b"")
    ports = [free_port(), *(s.sockets[0].getsockname()[1] for s in (not_found, not_a_card, hangs_up))]
    try:
        async with rig_with(ClientTLS()) as rig:
            verdicts = []
            for port in ports:
                peer = announced(port)
                rig.hear(packet(*service(peer), *peer.dns_addresses()), HERE)
                verdicts.append(await rig.verdict(peer.name))
            shown = set(rig.registry.rejections().values())
        assert verdicts == [NO_CARD] * len(ports) and shown == {NO_CARD}, (verdicts, shown)
    finally:
        for s in (not_found, not_a_card, hangs_up):
            s.close()
