"""An mDNS announcement names the address and port Sentinel fetches a card from, and anyone on the link can
send one: the fetch goes only to announced addresses inside ``sentinel.a2a.peer_networks`` (by default
loopback and the browsed interfaces' subnets), so a spoofer cannot aim Sentinel at a metadata service, a
router's admin page or another network. Real HTTP and a raw TCP listener on 127.0.0.1; real zeroconf for the
announcement."""

from __future__ import annotations

import socket
import uuid
from typing import Any

import httpx2
import pytest
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem
from tests.a2a.raw_listener import Counting, listening

from sentinel_mcp.a2a import discovery
from sentinel_mcp.a2a.discovery import PeerRejected, txt_record, verify_peer
from sentinel_mcp.a2a.peer_browser import discover_peers, open_zeroconf
from sentinel_mcp.a2a.peer_networks import parse_networks
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.config import ConfigError

pytestmark = pytest.mark.timeout(60)
TLS_TXT = {**txt_record(A2ASettings()), "tls": "1"}
OUTSIDE = ["169.254.169.254", "10.0.0.1", "192.0.2.7", "8.8.8.8", "100.64.0.1", "0.0.0.0", "224.0.0.251",
           "not-an-address", "::ffff:169.254.169.254"]



@pytest.mark.parametrize("address", OUTSIDE)
async def test_a_card_is_not_fetched_from_an_address_outside_the_allowed_networks(address: str) -> None:
    async with httpx2.AsyncClient(timeout=5) as http:
        with pytest.raises(PeerRejected, match="outside the allowed networks"):
            await verify_peer("spoof", [address], 443, TLS_TXT, http, networks=A2ASettings().card_networks)


async def test_the_configured_networks_decide_and_no_connection_is_made_elsewhere() -> None:
    async with listening(Counting()) as local, httpx2.AsyncClient(timeout=5) as http:
        only_other = parse_networks(["192.0.2.0/24"])
        with pytest.raises(PeerRejected, match="outside the allowed networks"):
            await verify_peer("spoof", ["127.0.0.1"], local.port, TLS_TXT, http, networks=only_other)
        # of several announced addresses, only one inside the networks is fetched from (not the first)
        second = parse_networks(["127.0.0.2/32"])
        with pytest.raises(PeerRejected, match="card fetch failed"):
            await verify_peer("spoof", ["127.0.0.1", "127.0.0.2"], local.port, TLS_TXT, http, networks=second)
        assert local.connections == 0


async def test_a_redirect_from_the_card_address_is_not_followed() -> None:
    from starlette.applications import Starlette
    from starlette.responses import RedirectResponse
    from starlette.routing import Route
    from tests.support.served_app import served_app

    async with listening(Counting()) as target:
        def app_at(port: int) -> Starlette:
            async def card(request: Any) -> RedirectResponse:
                return RedirectResponse(f"http://127.0.0.1:{target.port}/.well-known/agent-card.json", 302)
            return Starlette(routes=[Route("/.well-known/agent-card.json", card)])

        async with served_app(app_at, log_level="warning") as port, httpx2.AsyncClient(timeout=5) as http:
            with pytest.raises(PeerRejected, match="HTTP 302"):
                await verify_peer("redirector", ["127.0.0.1"], port, txt_record(A2ASettings()), http,
                                  allow_loopback_plaintext=True)
        assert target.connections == 0


def test_the_default_networks_are_loopback_and_the_browsed_link() -> None:
    nets = A2ASettings().card_networks
    assert all(n.is_loopback for n in nets)
    with pytest.raises(ConfigError, match="peer_networks"):
        A2ASettings.from_section({"peer_networks": ["everything"]})
    assert A2ASettings(peer_networks=[]).card_networks == ()


async def test_an_mdns_announcement_pointing_outside_is_rejected_with_the_reason() -> None:
    reason = multicast_problem()
    if reason:
        pytest.skip(reason)
    from zeroconf.asyncio import AsyncServiceInfo

    zc = open_zeroconf(LOOPBACK)
    name = f"spoof-{uuid.uuid4().hex[:8]}.{discovery.SERVICE_TYPE}"
    info = AsyncServiceInfo(discovery.SERVICE_TYPE, name, addresses=[socket.inet_aton("169.254.169.254")],
                            port=80, properties=TLS_TXT, server=f"{name.split('.')[0]}.local.")
    try:
        await zc.async_register_service(info)
        found = await discover_peers(LOOPBACK, 3.0, networks=A2ASettings(interfaces=LOOPBACK).card_networks)
        assert "outside the allowed networks" in found.rejected.get(name, ""), found.rejected
    finally:
        await zc.async_unregister_service(info)
        await zc.async_close()
