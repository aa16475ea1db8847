"""How the gateway's HTTP server hosts the A2A participant (same host and port as ``/mcp``).

    peers = PeerRegistry()
    routes = create_a2a_routes(port, settings, peers)      # card, POST /a2a, WS /a2a/ws
    async with a2a_lifespan(settings, base_url, peers):     # mDNS advertise + browse when settings.advertise
        ...serve...
"""

from __future__ import annotations

import contextlib
import logging
from typing import AsyncIterator

from starlette.routing import BaseRoute, Route, WebSocketRoute

from a2a.card import CARD_PATH, RPC_PATH, WS_PATH, make_card_endpoint
from a2a.discovery import Advertiser, PeerBrowser, PeerRegistry, instance_name, open_zeroconf
from a2a.jsonrpc_http import make_endpoint
from a2a.service import A2AService
from a2a.settings import A2ASettings
from a2a.ws_binding import make_ws_endpoint
from sentinel_mcp.gateway.port import GatewayPort

log = logging.getLogger(__name__)

__all__ = ["A2ASettings", "PeerRegistry", "a2a_lifespan", "create_a2a_routes"]


def create_a2a_routes(port: GatewayPort, settings: A2ASettings, peers: PeerRegistry | None = None,
                      service: A2AService | None = None) -> list[BaseRoute]:
    """Starlette routes of the A2A participant; empty when ``settings.enabled`` is false."""
    if not settings.enabled:
        return []
    service = service or A2AService(port, settings, peers)
    return [
        Route(CARD_PATH, make_card_endpoint(service), methods=["GET"], name="a2a_agent_card"),
        Route(RPC_PATH, make_endpoint(service), methods=["POST"], name="a2a_jsonrpc"),
        WebSocketRoute(WS_PATH, make_ws_endpoint(service), name="a2a_ws"),
    ]


@contextlib.asynccontextmanager
async def a2a_lifespan(settings: A2ASettings, base_url: str,
                       peers: PeerRegistry | None = None) -> AsyncIterator[PeerRegistry]:
    """Advertise this agent over mDNS and keep ``peers`` filled with verified peers.

    Does nothing (but yield the registry) when A2A is disabled or ``advertise`` is false. mDNS that
    cannot start (no multicast) is logged and skipped: local capabilities keep working.
    """
    registry = peers if peers is not None else PeerRegistry()
    if not (settings.enabled and settings.advertise):
        yield registry
        return
    zc = open_zeroconf(settings.interfaces)
    advertiser = Advertiser(settings, base_url, zc)
    browser = PeerBrowser(zc, registry, exclude={instance_name(settings.name)})
    registered = False
    try:
        try:
            own = await advertiser.start()
            registered = True
            browser.exclude.add(own)
            await browser.start()
        except OSError as e:
            log.warning("A2A mDNS unavailable (%s); running without discovery", e)
        yield registry
    finally:
        await browser.stop()
        if registered:
            with contextlib.suppress(Exception):
                await advertiser.stop()
        await zc.async_close()
