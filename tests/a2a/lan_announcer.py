"""A simulated mDNS announcer for discovery tests: records handed to the browsing zeroconf's own socket
listener as a datagram from a chosen source (``HERE``: loopback; ``LAN_HOST``: a host on a LAN interface, as
the kernel gives the socket a packet heard there), and a real ``PeerBrowser`` behind it."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem

from sentinel_mcp.a2a.card_fetch_budget import CardFetchBudget
from sentinel_mcp.a2a.card_signature import NO_KEYS, CardKeys
from sentinel_mcp.a2a.discovery import SERVICE_TYPE, PeerRegistry, txt_record
from sentinel_mcp.a2a.peer_browser import PeerBrowser, open_zeroconf
from sentinel_mcp.a2a.peer_networks import parse_networks
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.tls.settings import ClientTLS

LAN_HOST = ("192.0.2.9", 5353)
HERE = ("127.0.0.1", 5353)
# both browsed: loopback and the (simulated) LAN's subnet are allowed networks
NETWORKS = parse_networks(["127.0.0.0/8", "192.0.2.0/24"])



def announced(port: int, *, address: str = "127.0.0.1", server: str | None = None, txt: Any = None) -> Any:
    from zeroconf.asyncio import AsyncServiceInfo

    label = f"svc-{uuid.uuid4().hex[:10]}"
    return AsyncServiceInfo(SERVICE_TYPE, f"{label}.{SERVICE_TYPE}", addresses=[socket.inet_aton(address)],
                            port=port, properties=txt if txt is not None else txt_record(A2ASettings()),
                            server=server or f"{label}.local.")


def packet(*records: Any) -> bytes:
    from zeroconf import DNSOutgoing
    from zeroconf.const import _FLAGS_AA, _FLAGS_QR_RESPONSE

    out = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
    for record in records:
        out.add_answer_at_time(record, 0)
    return out.packets()[0]


def service(info: Any) -> list[Any]:
    return [info.dns_pointer(), info.dns_service(), info.dns_text()]


class InjectedOnly(PeerBrowser):
    """The rig's browser: it looks only at the names a test handed its listener (``Rig.hear``). Its socket is
    on the machine's loopback mDNS group, where a parallel test run's announcers and Sentinels answer too:
    their names took the queue's places, the resolving slots and the registry's bounded rejections meanwhile
    (CI: a name injected here was neither rejected nor taken within 200 looks)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.injected: set[str] = set()

    def _changed(self, name: str, change: Any) -> None:
        if name.lower() in self.injected:
            super()._changed(name, change)


def instance_names(datagram: bytes) -> set[str]:
    """The service instances a datagram's records name (lower case, as mDNS compares names)."""
    from zeroconf import DNSPointer
    from zeroconf._protocol.incoming import DNSIncoming

    names = set()
    for record in DNSIncoming(datagram).answers():
        if isinstance(record, DNSPointer) and record.name.lower() == SERVICE_TYPE.lower():
            names.add(record.alias.lower())
        elif record.name.lower().endswith("." + SERVICE_TYPE.lower()):
            names.add(record.name.lower())
    return names


class Rig:
    def __init__(self, zc: Any, registry: PeerRegistry, browser: PeerBrowser | None = None) -> None:
        self.zc, self.registry, self.browser = zc, registry, browser

    def hear(self, packet: bytes, source: tuple[str, int]) -> None:
        """``packet`` taken in by the browsing zeroconf's own socket listener, as from ``source``."""
        if isinstance(self.browser, InjectedOnly):
            self.browser.injected |= instance_names(packet)
        self.zc.zeroconf.engine.protocols[0].datagram_received(packet, source)

    async def verdict(self, name: str) -> str:
        for _ in range(200):  # (a count, not a time: each turn lets the loop run the browser's jobs)
            if name in self.registry.rejected or name in self.registry.peers:
                return self.registry.rejected.get(name, "taken")
            await asyncio.sleep(0.05)
        browser = self.browser
        state = (f"pending {sorted(browser.pending)[:5]}, waiting {sorted(browser.waiting)[:5]}, "
                 f"deferred {sorted(browser.deferred)[:5]}" if browser is not None else "")
        raise AssertionError(f"{name} was neither rejected nor taken ({state}; "
                             f"{len(self.registry.rejected)} rejected)")


# what a test of many peers gives its browser: every announcer is on this machine (loopback), where the
# fetch rate counts them all as one machine (card_fetch_budget.py); those tests are about other bounds
MANY_MACHINES = 1000


def many_machines() -> CardFetchBudget:
    return CardFetchBudget(burst=MANY_MACHINES, total_burst=MANY_MACHINES)


async def lan_rig(tls: ClientTLS | None = None, keys: CardKeys = NO_KEYS,
                  fetches: CardFetchBudget | None = None) -> AsyncIterator[Rig]:
    """A browsing zeroconf on loopback and its ``PeerBrowser`` (for a fixture's ``async for``); ``keys``:
    what the browser checks card signatures against; ``fetches``: its card fetch budget."""
    reason = multicast_problem()
    if reason:
        pytest.skip(reason)
    zc = open_zeroconf(LOOPBACK)
    await zc.zeroconf.async_wait_for_start()
    registry = PeerRegistry()
    browser = InjectedOnly(zc, registry, allow_loopback_plaintext=True, networks=NETWORKS, tls=tls,
                          resolve_timeout_ms=300, keys=keys, fetches=fetches)
    await browser.start()
    try:
        yield Rig(zc, registry, browser)
    finally:
        await browser.stop()
        await zc.async_close()




def rig_with(tls: ClientTLS) -> Any:
    """A rig whose browser checks peers as ``tls`` says (an async context manager)."""
    import contextlib

    return contextlib.asynccontextmanager(lan_rig)(tls)
