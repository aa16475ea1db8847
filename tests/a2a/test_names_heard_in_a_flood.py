"""A name announced while the browser's queue is full (a flood of names) is no longer dropped until it is
announced again: a bounded set of names waits its turn (oldest first, forgotten after ``LATER_FOR``) and is
looked at as the queue drains, so a real peer announced during a flood is listed. Real zeroconf listener,
announcements taken in by its own socket listener (as heard from loopback), a card served over real HTTP."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from tests.a2a.card_server import serving_card
from tests.a2a.lan_announcer import HERE, Rig, announced, lan_rig, packet, service
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a import discovery, peer_browser

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    async for r in lan_rig():
        yield r


def flood(rig: Rig, count: int) -> list[str]:
    """``count`` names announced by a PTR record alone (none resolves: each takes a resolution's time)."""
    from zeroconf import DNSPointer, const

    tag, names = uuid.uuid4().hex[:8], []
    for batch in range(0, count, 40):
        records = []
        for i in range(batch, min(count, batch + 40)):
            names.append(f"flood-{tag}-{i}.{discovery.SERVICE_TYPE}")
            ptr = DNSPointer(discovery.SERVICE_TYPE, const._TYPE_PTR, const._CLASS_IN, 4500, names[-1])
            records.append(ptr)
        rig.hear(packet(*records), HERE)
    return names


async def test_a_peer_announced_during_a_flood_is_listed_when_its_turn_comes(rig: Rig) -> None:
    assert rig.browser is not None
    async with serving_card(lambda port: card_at(port, "late")) as port:
        flood(rig, discovery.MAX_PENDING + 40)
        for _ in range(100):  # (a count: each turn lets the browser take the flood in)
            if len(rig.browser.pending) >= discovery.MAX_PENDING:
                break
            await asyncio.sleep(0.02)
        late = announced(port)
        rig.hear(packet(*service(late), *late.dns_addresses()), HERE)
        for _ in range(1200):  # (a count: the flood's names are looked at, a few at a time, then this one)
            if late.name in rig.registry.peers or late.name in rig.registry.rejected:
                break
            await asyncio.sleep(0.05)
        assert rig.registry.ignored > 0  # it did wait beyond the queue
        assert late.name in rig.registry.peers, rig.registry.rejected.get(late.name)


async def test_the_names_waiting_are_bounded_and_the_oldest_forgotten_first(rig: Rig) -> None:
    assert rig.browser is not None
    names = flood(rig, discovery.MAX_PENDING + peer_browser.MAX_LATER + 50)
    for _ in range(100):
        if len(rig.browser.pending) >= discovery.MAX_PENDING and rig.browser.waiting:
            break
        await asyncio.sleep(0.02)
    waiting = rig.browser.waiting
    assert len(waiting) <= peer_browser.MAX_LATER
    assert names[-1] in waiting and names[discovery.MAX_PENDING] not in waiting


async def test_a_name_that_waited_too_long_is_forgotten(rig: Rig) -> None:
    assert rig.browser is not None
    now = [0.0]
    rig.browser._clock = lambda: now[0]
    names = flood(rig, discovery.MAX_PENDING + 20)
    for _ in range(100):
        if len(rig.browser.waiting) == 20:
            break
        await asyncio.sleep(0.02)
    assert rig.browser.waiting == frozenset(names[-20:])
    now[0] += peer_browser.LATER_FOR + 1  # past their time: forgotten, not looked at
    for _ in range(600):  # (a count: the queue drains, a few at a time)
        if not rig.browser.pending:
            break
        await asyncio.sleep(0.05)
    assert not rig.browser.pending and not rig.browser.waiting
    assert names[0] in rig.registry.rejected  # the queue's were looked at (and did not resolve)
    assert not set(names[-20:]) & set(rig.registry.rejected)


async def test_a_peer_waiting_beyond_the_queue_is_not_pushed_out_by_a_flood_that_goes_on(rig: Rig) -> None:
    # the oldest waiting was forgotten first whoever announced it: a flood that went on pushed every name out
    # of the waiting list before its turn (the peer's too); now the announcer with the most names waiting
    # (the machine its cached records name, or none) gives up its own
    assert rig.browser is not None
    async with serving_card(lambda port: card_at(port, "late")) as port:
        flood(rig, discovery.MAX_PENDING + peer_browser.MAX_LATER)
        for _ in range(100):  # (a count: each turn lets the browser take the flood in)
            if len(rig.browser.waiting) >= peer_browser.MAX_LATER - 1:
                break
            await asyncio.sleep(0.02)
        late = announced(port)  # (its records, cached, name its machine)
        rig.hear(packet(*service(late), *late.dns_addresses()), HERE)
        for _ in range(100):
            if late.name in rig.browser.waiting:
                break
            await asyncio.sleep(0.02)
        assert late.name in rig.browser.waiting
        ignored = rig.registry.ignored
        flood(rig, 2 * peer_browser.MAX_LATER)  # the flood goes on: twice the waiting list
        for _ in range(100):
            if rig.registry.ignored >= ignored + 2 * peer_browser.MAX_LATER:
                break
            await asyncio.sleep(0.02)
        assert rig.registry.ignored >= ignored + 2 * peer_browser.MAX_LATER
        assert len(rig.browser.waiting) <= peer_browser.MAX_LATER
        for _ in range(600):  # (a count: the names before it are looked at, a few at a time)
            if late.name not in rig.browser.waiting | rig.browser.pending:
                break
            await asyncio.sleep(0.05)
        assert late.name in rig.registry.peers, rig.registry.rejected.get(late.name)
