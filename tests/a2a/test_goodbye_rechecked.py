"""An mDNS goodbye (the records sent again with TTL 0) is anyone's word: any host on the link can send one for
a name it does not own, and it removed that listed peer at once (so did announcing the name again
elsewhere, or with a TXT that does not check out: the peer was replaced, or rejected and dropped). Now a
goodbye, or another announcement of a listed name, makes the browser check the peer's card again where it
was checked (within the card fetch budget): the peer stays while its card still checks out there, and goes
when it does not. Real zeroconf listener, goodbyes heard from loopback and from a LAN host, the card served
over real HTTP on 127.0.0.1 and its fetches counted there."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from tests.a2a.card_server import serving_card
from tests.a2a.lan_announcer import HERE, LAN_HOST, announced, lan_rig, packet, service
from tests.a2a.raw_listener import Counting, listening
from tests.a2a.test_card_signatures import card_at
from zeroconf.asyncio import AsyncServiceInfo

from sentinel_mcp.a2a.card_fetch_budget import LONGEST_WAIT, CardFetchBudget
from sentinel_mcp.a2a.discovery import SERVICE_TYPE, txt_record
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(120)


def goodbye(info: Any) -> bytes:
    return packet(info.dns_pointer(override_ttl=0), info.dns_service(override_ttl=0),
                  info.dns_text(override_ttl=0))


async def until(done: Any) -> bool:
    for _ in range(200):  # (a count: each turn lets zeroconf and the browser take the packet in)
        if done():
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize("source", [HERE, LAN_HOST], ids=["from-loopback", "from-the-lan"])
async def test_a_goodbye_removes_a_peer_only_when_its_card_is_gone(source: tuple[str, int]) -> None:
    now = [0.0]
    fetches: list[int] = []
    serves = [True]

    def card(port: int) -> dict[str, Any] | bytes:
        fetches.append(port)
        return card_at(port, "steady") if serves[0] else b"gone"

    async with rig_at(now) as rig, serving_card(card) as port:
        assert rig.browser is not None
        stays, goes = announced(port), announced(port)
        for info in (stays, goes):
            rig.hear(packet(*service(info), *info.dns_addresses()), HERE)
            assert await rig.verdict(info.name) == "taken"
        assert len(fetches) == 2
        now[0] += 2 * LONGEST_WAIT  # (the names' fetch backoff has passed)
        rig.hear(goodbye(stays), source)  # someone says it left; it did not
        assert await until(lambda: len(fetches) == 3), fetches
        assert await until(lambda: stays.name not in rig.browser.pending)
        assert stays.name in rig.registry.peers
        serves[0] = False  # the card is gone: the next goodbye is borne out
        rig.hear(goodbye(goes), source)
        assert await until(lambda: goes.name not in rig.registry.peers)
        assert len(fetches) == 4 and stays.name in rig.registry.peers


def rig_at(now: list[float]) -> Any:
    """A browser on the test's clock: a name's fetch backoff passes when the test says (a wait it asks for
    is slept: kept short)."""
    budget = CardFetchBudget(clock=lambda: now[0], first_wait=0.01)
    return contextlib.asynccontextmanager(lan_rig)(fetches=budget)


def at(info: Any, port: int, **txt: str) -> Any:
    """``info``'s name and host, announced at another port (and TXT)."""
    return AsyncServiceInfo(SERVICE_TYPE, info.name, port=port, server=info.server, addresses=info.addresses,
                            properties={**txt_record(A2ASettings()), **txt})


@pytest.mark.parametrize("source", [HERE, LAN_HOST], ids=["from-loopback", "from-the-lan"])
async def test_another_announcement_of_a_listed_name_neither_removes_nor_replaces_it(
        source: tuple[str, int]) -> None:
    """The same instance name announced again at another address, or with a TXT whose card path is no card:
    the listed peer is checked again where it was, and stays while it checks out there (the other address is
    never fetched)."""
    now, fetches = [0.0], []

    def card(port: int) -> dict[str, Any]:
        fetches.append(port)
        return card_at(port, "steady")

    async with rig_at(now) as rig, serving_card(card) as port, listening(Counting()) as other:
        assert rig.browser is not None
        info = announced(port)
        rig.hear(packet(*service(info), *info.dns_addresses()), HERE)
        assert await rig.verdict(info.name) == "taken"
        listed = rig.registry.peers[info.name].base_url
        for hijack in (at(info, other.port), at(info, port, path="/admin")):
            now[0] += 2 * LONGEST_WAIT  # (the name's fetch backoff has passed)
            checked = len(fetches)
            rig.hear(packet(hijack.dns_service(), hijack.dns_text()), source)
            assert await until(lambda: len(fetches) == checked + 1)  # the listed one checked again
            assert await until(lambda: info.name not in rig.browser.pending)
            assert info.name in rig.registry.peers, rig.registry.rejected.get(info.name)
            assert rig.registry.peers[info.name].base_url == listed
        assert other.connections == 0


async def test_a_listed_peer_that_moved_is_listed_where_it_went() -> None:
    """Its old address has no card any more, its announcement names the new one: the name is given up, and
    the new announcement checked as any other."""
    now, serves = [0.0], [True]

    def card(port: int) -> dict[str, Any] | bytes:
        return card_at(port, "steady") if serves[0] else b"gone"

    async with rig_at(now) as rig, serving_card(card) as port, \
            serving_card(lambda new: card_at(new, "steady")) as moved_to:
        assert rig.browser is not None
        info = announced(port)
        rig.hear(packet(*service(info), *info.dns_addresses()), HERE)
        assert await rig.verdict(info.name) == "taken"
        serves[0] = False
        now[0] += 2 * LONGEST_WAIT
        moved = at(info, moved_to)
        rig.hear(packet(moved.dns_service(), moved.dns_text()), HERE)
        where = f"http://127.0.0.1:{moved_to}"
        for _ in range(200):  # (a count: the old address checked, then the new one when the budget allows)
            peer = rig.registry.peers.get(info.name)
            if peer is not None and peer.base_url == where:
                break
            now[0] += 2 * LONGEST_WAIT
            await asyncio.sleep(0.05)
        assert rig.registry.peers[info.name].base_url == where


async def test_a_listed_peer_that_said_goodbye_and_moved_is_listed_where_it_went() -> None:
    """Its goodbye's check waits its fetch turn, and its new announcement comes meanwhile: that check looks at
    the announcement as it is then (before, it only checked the old address and dropped the peer: the new
    announcement, heard while the goodbye's check waited, was never looked at)."""
    now, serves = [0.0], [True]

    def card(port: int) -> dict[str, Any] | bytes:
        return card_at(port, "steady") if serves[0] else b"gone"

    async with rig_at(now) as rig, serving_card(card) as port, \
            serving_card(lambda new: card_at(new, "steady")) as moved_to:
        assert rig.browser is not None
        info = announced(port)
        rig.hear(packet(*service(info), *info.dns_addresses()), HERE)
        assert await rig.verdict(info.name) == "taken"
        serves[0] = False
        rig.hear(goodbye(info), HERE)  # (the name's fetch backoff has not passed: its check waits its turn)
        assert await until(lambda: info.name in rig.browser.deferred)
        moved = at(info, moved_to)
        rig.hear(packet(*service(moved), *moved.dns_addresses()), HERE)
        where = f"http://127.0.0.1:{moved_to}"
        for _ in range(200):  # (a count: the old address checked, then the new one, each in its turn)
            now[0] += 2 * LONGEST_WAIT
            peer = rig.registry.peers.get(info.name)
            if peer is not None and peer.base_url == where:
                break
            await asyncio.sleep(0.05)
        assert info.name in rig.registry.peers, rig.registry.rejected.get(info.name)
        assert rig.registry.peers[info.name].base_url == where
