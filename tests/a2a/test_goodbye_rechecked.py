"""An mDNS goodbye (the records sent again with TTL 0) is anyone's word: any host on the link can send one for
a name it does not own, and it removed that listed peer at once. Now a goodbye makes the browser check the
peer's card again where it was checked (within the card fetch budget): the peer stays while its card still
checks out there, and goes when it does not. Real zeroconf listener, goodbyes heard from loopback and from
a LAN host, the card served over real HTTP on 127.0.0.1 and its fetches counted there."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from tests.a2a.card_server import serving_card
from tests.a2a.lan_announcer import HERE, LAN_HOST, announced, lan_rig, packet, service
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a.card_fetch_budget import LONGEST_WAIT, CardFetchBudget

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

    budget = CardFetchBudget(clock=lambda: now[0])
    async with contextlib.asynccontextmanager(lan_rig)(fetches=budget) as rig, serving_card(card) as port:
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
