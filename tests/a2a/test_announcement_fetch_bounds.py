"""What announcements can make Sentinel fetch is bounded by count. An announcer that keeps changing a name's
record made a card fetch per change (a rate, then a backoff, now: the change waits, deferred, and the name is
looked at again later); one card server announced under many names was listed under each, up to the whole
list (now at most ``MAX_NAMES_PER_ENDPOINT`` names per address, and a name beyond that fetches nothing).
Real zeroconf listener, announcements heard from loopback, cards served over real HTTP on 127.0.0.1 and
counted there."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.a2a.card_server import serving_card
from tests.a2a.lan_announcer import HERE, Rig, announced, lan_rig, packet, service
from tests.a2a.raw_listener import Counting, listening
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a import discovery
from sentinel_mcp.a2a.card_fetch_budget import (BURST, FIRST_WAIT, PORT_BURST, PORT_EVERY, TOTAL_BURST,
                                                CardFetchBudget, fetch_key)
from sentinel_mcp.a2a.discovery import txt_record
from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def announcer() -> AsyncIterator[Rig]:
    async for r in lan_rig():
        yield r


def counted(fetches: list[int]) -> Any:
    def card(port: int) -> dict[str, Any]:
        fetches.append(port)
        return card_at(port, "flappy")
    return card


async def test_a_name_whose_announcement_keeps_changing_is_fetched_once_then_deferred(announcer: Rig) -> None:
    from zeroconf.asyncio import AsyncServiceInfo

    fetches: list[int] = []
    async with serving_card(counted(fetches)) as port:
        first = announced(port)
        announcer.hear(packet(*service(first), *first.dns_addresses()), HERE)
        assert await announcer.verdict(first.name) == "taken" and len(fetches) == 1
        assert announcer.browser is not None
        for flap in range(6):  # the same name, its TXT changed each time (as a flapping announcer does)
            changed = AsyncServiceInfo(discovery.SERVICE_TYPE, first.name, addresses=first.addresses,
                                       port=port, server=first.server,
                                       properties={**txt_record(A2ASettings()), "ver": f"flap-{flap}"})
            before = len(fetches)
            announcer.hear(packet(changed.dns_text()), HERE)
            for _ in range(200):  # (a count: each turn lets the browser take the change in)
                if len(fetches) > before or first.name in announcer.browser.deferred:
                    break
                await asyncio.sleep(0.05)
            assert first.name in announcer.browser.deferred, (flap, len(fetches))
        assert len(fetches) == 1  # the changes wait; the last is checked when the name may be fetched again
        assert first.name in announcer.registry.peers  # what was checked stands meanwhile


async def test_one_address_is_listed_under_a_few_names_and_the_rest_fetch_nothing(announcer: Rig) -> None:
    bound = discovery.MAX_NAMES_PER_ENDPOINT
    fetches: list[int] = []
    async with serving_card(counted(fetches)) as port:
        verdicts = []
        for _ in range(bound + 3):
            info = announced(port)
            announcer.hear(packet(*service(info), *info.dns_addresses()), HERE)
            verdicts.append(await announcer.verdict(info.name))
    assert verdicts[:bound] == ["taken"] * bound
    assert all("already list the agent at this address" in v for v in verdicts[bound:]), verdicts
    assert len(announcer.registry.peers) == bound and len(fetches) == bound


def test_the_budget_backs_off_per_name_and_rates_per_endpoint() -> None:
    now = [0.0]
    budget = CardFetchBudget(clock=lambda: now[0])
    assert budget.wait("a", "e") == 0
    budget.took("a", "e")
    waits = []
    for _ in range(4):  # the name keeps changing: each next fetch waits twice as long
        wait = budget.wait("a", "e")
        waits.append(wait)
        now[0] += wait
        budget.took("a", "e")
    assert waits == [FIRST_WAIT, 2 * FIRST_WAIT, 4 * FIRST_WAIT, 8 * FIRST_WAIT]
    # many names at one endpoint: its burst, then one per PORT_EVERY (its machine's allowance left to others)
    for i in range(PORT_BURST):
        assert budget.wait(f"n{i}", "crowded") == 0
        budget.took(f"n{i}", "crowded")
    assert budget.wait("another", "crowded") == PORT_EVERY
    assert budget.wait("another", "elsewhere") == 0


# each row: spellings of one machine (or of one IPv6 /64, which one host may use all of); rows differ
SAME_MACHINE = [
    ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "::ffff:127.0.0.1", "[::ffff:7f00:1]", "0.0.0.0",
     "::"],
    ["192.0.2.9", "::ffff:192.0.2.9", "[::ffff:c000:209]", "::FFFF:192.0.2.9"],
    ["192.0.2.10"],
    ["fe80::1", "[fe80::1%eth0]", "fe80::2", "FE80::abcd:1"],
    ["2001:db8::1", "2001:db8:0:0:ffff::1", "[2001:DB8::ffff]"],
    ["2001:db8:0:1::1"],
]


def test_the_fetch_rate_counts_each_machine_once_however_its_address_is_spelled() -> None:
    keys = [{fetch_key(spelling) for spelling in row} for row in SAME_MACHINE]
    assert all(len(k) == 1 for k in keys), keys
    assert len(set().union(*keys)) == len(SAME_MACHINE), keys


def test_many_addresses_share_one_total_allowance() -> None:
    now = [0.0]
    budget = CardFetchBudget(clock=lambda: now[0])
    for i in range(TOTAL_BURST):  # each a fresh name and a fresh address: the total still counts them
        endpoint = f"http://192.0.2.{i % 250}:{1000 + i}"
        assert budget.wait(f"n{i}", endpoint) == 0
        budget.took(f"n{i}", endpoint)
    assert budget.wait("one-more", "http://198.51.100.7:80") > 0


async def test_rotating_ports_and_address_spellings_get_no_fresh_allowance(announcer: Rig) -> None:
    """One machine announced under many names, each at another port of it and some by its IPv4-mapped
    address: the card fetches (connections reaching it, counted there) stop at one address's burst."""
    from zeroconf.asyncio import AsyncServiceInfo

    async with contextlib.AsyncExitStack() as stack:
        listeners = [await stack.enter_async_context(listening(Counting())) for _ in range(BURST + 4)]
        names = []
        txt = {**txt_record(A2ASettings()), "tls": "1"}  # (a plaintext one is refused at a mapped address)
        for i, listener in enumerate(listeners):
            info = announced(listener.port, txt=txt)
            if i % 2:  # an AAAA record of the IPv4-mapped address instead of the A record
                mapped = socket.inet_pton(socket.AF_INET6, "::ffff:127.0.0.1")
                info = AsyncServiceInfo(discovery.SERVICE_TYPE, info.name, port=listener.port,
                                        server=info.server, addresses=[mapped], properties=txt)
            announcer.hear(packet(*service(info), *info.dns_addresses()), HERE)
            names.append(info.name)
        assert announcer.browser is not None
        for name in names:  # each fetched and refused (nothing answers a card), or deferred
            for _ in range(200):  # (a count: each turn lets the browser take the announcement in)
                if name in announcer.registry.rejected or name in announcer.browser.deferred:
                    break
                await asyncio.sleep(0.05)
        fetched = sum(listener.connections for listener in listeners)
        assert fetched == BURST, [listener.connections for listener in listeners]
        assert len(announcer.browser.deferred) == len(listeners) - BURST
