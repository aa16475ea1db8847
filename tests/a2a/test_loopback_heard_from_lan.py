"""Browsing loopback and a LAN interface, a host on the LAN can announce a service at ``127.0.0.1`` and a port
of its choosing (an admin console, PostgreSQL, an adb server): loopback is an allowed network, so the card
fetch would be a request from this machine to its own loopback service. zeroconf does not say where a record
came from; the packet that carried it does (``heard_on_loopback.py``). A loopback address is fetched from only
when the records that chose it (SRV: host and port, TXT: path and scheme, the host's address) came in packets
from loopback.

The LAN is simulated as the LAN-browse test does on a machine with only loopback: the announcement is handed
to the real zeroconf listener as a datagram from 192.0.2.9 (what the kernel gives the socket for a packet
heard on a LAN interface); the same bytes from 127.0.0.1 are the control, so the test fails where the source
is not what decides. A counting TCP listener on 127.0.0.1 stands for the local service."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tests.a2a.lan_announcer import HERE, LAN_HOST, Rig, announced, lan_rig, packet, service
from tests.a2a.raw_listener import Counting
from tests.a2a.raw_listener import listening

from sentinel_mcp.a2a.card_fetch import NO_CARD
from sentinel_mcp.a2a.discovery import txt_record
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)
NOT_HEARD = "not heard from loopback"


@pytest.fixture
async def announcer() -> AsyncIterator[Rig]:
    async for r in lan_rig():
        yield r


async def test_a_lan_announcement_of_loopback_makes_no_connection_and_the_same_from_loopback_does(
        announcer: Rig) -> None:
    async with listening(Counting()) as local:
        for txt in (txt_record(A2ASettings()), {**txt_record(A2ASettings()), "tls": "1"}):
            spoof = announced(local.port, txt=txt)
            announcer.hear(packet(*service(spoof), *spoof.dns_addresses()), LAN_HOST)
            assert NOT_HEARD in await announcer.verdict(spoof.name)
        assert local.connections == 0
        # the control: the same kind of announcement, heard from loopback, is fetched from
        local_peer = announced(local.port)
        announcer.hear(packet(*service(local_peer), *local_peer.dns_addresses()), HERE)
        assert NO_CARD == await announcer.verdict(local_peer.name)
        assert local.connections == 1


async def test_a_lan_host_cannot_lend_its_port_or_path_to_a_host_loopback_announced(
        announcer: Rig) -> None:
    """A local agent announced host ``agent.local.`` at 127.0.0.1; a LAN host announces a service on that
    host at the port of another local service, or the local agent's own service with its own TXT, or a
    second address for it: each record that chose the target must have been heard from loopback."""
    async with listening(Counting()) as local, listening(Counting()) as other:
        honest = announced(local.port)
        announcer.hear(packet(*service(honest), *honest.dns_addresses()), HERE)
        assert NO_CARD == await announcer.verdict(honest.name)
        assert local.connections == 1
        # its host, a port the LAN host chose (SRV from the LAN, the address record from loopback)
        lent = announced(other.port, server=honest.server)
        announcer.hear(packet(*service(lent)), LAN_HOST)
        assert NOT_HEARD in await announcer.verdict(lent.name)
        # the loopback SRV and address repeated, the TXT the LAN host's (another path, plaintext)
        retold = announced(local.port, server=honest.server,
                           txt={"path": "/other/agent-card.json", "tls": "0"})
        announcer.hear(packet(honest.dns_pointer(), honest.dns_service(), honest.dns_text()), HERE)
        announcer.hear(packet(retold.dns_pointer(), *[r for r in service(retold)[1:2]],
                         *honest.dns_addresses()), HERE)
        announcer.hear(packet(retold.dns_text()), LAN_HOST)
        assert NOT_HEARD in await announcer.verdict(retold.name)
        # a loopback SRV whose host only the LAN host gave 127.0.0.2
        unnamed = announced(other.port, address="127.0.0.2")
        announcer.hear(packet(*service(unnamed)), HERE)
        announcer.hear(packet(*unnamed.dns_addresses()), LAN_HOST)
        assert NOT_HEARD in await announcer.verdict(unnamed.name)
        assert other.connections == 0 and local.connections == 1


async def test_what_a_lan_host_says_of_its_own_address_is_still_judged_by_the_networks(
        announcer: Rig) -> None:
    """Only addresses naming this machine need loopback's word: a LAN peer at a LAN address is fetched from
    (here nothing answers at 192.0.2.9: the fetch fails, it is not refused before it)."""
    peer = announced(9, address="192.0.2.9", txt={**txt_record(A2ASettings()), "tls": "1"})
    announcer.hear(packet(*service(peer), *peer.dns_addresses()), LAN_HOST)
    verdict = await announcer.verdict(peer.name)
    assert verdict == NO_CARD, verdict
