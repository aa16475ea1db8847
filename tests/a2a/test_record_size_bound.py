"""A host on the link chooses how large the records it announces are: zeroconf's cache is bounded by count
(10,000 records), not by size, and a TXT record may fill an mDNS packet (about 9 KB). Measured before: 12,000
TXT records of 8.7 KB heard from one LAN host held +94 MB. Now a TXT record larger than ``MAX_TXT_BYTES``
(RFC 6763 advises against more than 1300 bytes) is not cached. Real zeroconf, datagrams taken in by its own
socket listener as from a LAN host; memory counted by tracemalloc (bytes, not times)."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import AsyncIterator

import pytest
from tests.a2a.lan_announcer import LAN_HOST, Rig, lan_rig, packet

from sentinel_mcp.a2a.discovery import SERVICE_TYPE
from sentinel_mcp.a2a.record_size_bound import MAX_TXT_BYTES

HEARD = 1000


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    async for r in lan_rig():
        yield r


def txt(name: str, size: int) -> object:
    from zeroconf import DNSText, const

    text = b"".join(bytes([255]) + os.urandom(255) for _ in range(size // 256)) + b"\x00" * (size % 256)
    return DNSText(name, const._TYPE_TXT, const._CLASS_IN | const._CLASS_UNIQUE, 4500, text)


def cached_txt(rig: Rig, name: str) -> list[object]:
    from zeroconf import const

    return list(rig.zc.zeroconf.cache.async_all_by_details(name, const._TYPE_TXT, const._CLASS_IN))


async def test_large_txt_records_from_the_link_are_not_cached(rig: Rig) -> None:
    tag = os.urandom(4).hex()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(HEARD):  # each ~8.7 KB: together about 8.7 MB heard
            rig.hear(packet(txt(f"big-{tag}-{i}.{SERVICE_TYPE}", 34 * 256)), LAN_HOST)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert not cached_txt(rig, f"big-{tag}-0.{SERVICE_TYPE}")
    assert grown < HEARD * MAX_TXT_BYTES, grown  # (before: about 9 MB, the records held)


async def test_a_txt_record_within_the_bound_is_cached(rig: Rig) -> None:
    tag = os.urandom(4).hex()
    rig.hear(packet(txt(f"fits-{tag}.{SERVICE_TYPE}", MAX_TXT_BYTES)), LAN_HOST)
    rig.hear(packet(txt(f"over-{tag}.{SERVICE_TYPE}", MAX_TXT_BYTES + 1)), LAN_HOST)
    assert cached_txt(rig, f"fits-{tag}.{SERVICE_TYPE}")
    assert not cached_txt(rig, f"over-{tag}.{SERVICE_TYPE}")
