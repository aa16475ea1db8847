"""A flood of announced names does not grow the browser's memory without bound. zeroconf's cache is bounded
(it drops the record closest to expiring), but its browser schedules a refresh query for each name it saw and
was not told of the names the cache dropped: 3x10^5 names grew a gateway by 58 MB, and would have kept
growing for as long as the flood's TTLs. The refreshes of names no longer cached are now pruned as names
come in. Real zeroconf listener, announcements taken in by its own socket listener (as from loopback)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from tests.a2a.lan_announcer import HERE, Rig, lan_rig, packet

from sentinel_mcp.a2a import discovery, scheduled_refreshes

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    async for r in lan_rig():
        yield r


async def test_refreshes_are_kept_only_for_names_still_cached(rig: Rig) -> None:
    from zeroconf import DNSPointer, DNSText, const

    assert rig.browser is not None and rig.browser._browser is not None
    cache_bound = const._MAX_CACHE_RECORDS
    tag = uuid.uuid4().hex[:8]
    for batch in range(0, cache_bound * 3, 50):  # each name's PTR and a TXT: the cache drops the oldest
        records = []
        for i in range(batch, batch + 50):
            name = f"f-{tag}-{i}.{discovery.SERVICE_TYPE}"
            records.append(DNSPointer(discovery.SERVICE_TYPE, const._TYPE_PTR, const._CLASS_IN, 4500, name))
            unique = const._CLASS_IN | const._CLASS_UNIQUE
            records.append(DNSText(name, const._TYPE_TXT, unique, 4500, b"\x03a=b"))
        rig.hear(packet(*records), HERE)
        await asyncio.sleep(0)  # (the browser's handlers run on the loop, as between datagrams)
    for _ in range(20):  # (a count: the last handlers run)
        await asyncio.sleep(0)
    scheduler = rig.browser._browser.query_scheduler
    cache = rig.zc.zeroconf.cache
    bound = scheduled_refreshes.PRUNE_EVERY + len(
        cache.async_all_by_details(discovery.SERVICE_TYPE, const._TYPE_PTR, const._CLASS_IN))
    scheduled = len(scheduler._next_scheduled_for_alias)
    assert scheduled <= bound, (scheduled, bound)
    assert len(scheduler._query_heap) <= 2 * bound
