"""What announcements can make Sentinel fetch is bounded by count. An announcer that keeps changing a name's
record made a card fetch per change (a rate, then a backoff, now: the change waits, deferred, and the name is
looked at again later); one card server announced under many names was listed under each, up to the whole
list (now at most ``MAX_NAMES_PER_ENDPOINT`` names per address, and a name beyond that fetches nothing).
Real zeroconf listener, announcements heard from loopback, cards served over real HTTP on 127.0.0.1 and
counted there."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.a2a.card_server import serving_card
from tests.a2a.lan_announcer import HERE, Rig, announced, lan_rig, packet, service
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a import discovery
from sentinel_mcp.a2a.card_fetch_budget import BURST, CardFetchBudget, FIRST_WAIT
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
    # many names at one endpoint: a burst, then one per FIRST_WAIT
    for i in range(BURST):
        assert budget.wait(f"n{i}", "crowded") == 0
        budget.took(f"n{i}", "crowded")
    assert budget.wait("another", "crowded") == FIRST_WAIT
    assert budget.wait("another", "elsewhere") == 0
