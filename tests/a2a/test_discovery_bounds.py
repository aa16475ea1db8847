"""Anyone on the link can announce ``_a2a._tcp`` names, thousands at once: what the browser does for them is
bounded (a few resolutions at a time, a bounded queue, the newest rejections kept). Real zeroconf on
127.0.0.1; the flood is raw mDNS answers, as a hostile host would send them, handed to the browsing zeroconf's
own socket listener: sent to the machine's multicast group, every other browser on the machine (a parallel
test run's) heard the thousand names too, and its own names waited behind them."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from tests.a2a.a2a_rig import LOOPBACK, multicast_problem
from tests.a2a.lan_announcer import HERE

from sentinel_mcp.a2a import discovery
from sentinel_mcp.a2a.discovery import PeerRegistry
from sentinel_mcp.a2a.peer_browser import GRANTED_OVER, PeerBrowser, open_zeroconf

# the queue's places, and those a name whose card fetch turn came may take beyond them (``card_fetch_turns``)
BOUND = discovery.MAX_PENDING + GRANTED_OVER
pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(multicast_problem() is not None, reason=str(multicast_problem())),
]


def test_the_registry_keeps_only_the_newest_rejections():
    registry = PeerRegistry()
    for i in range(discovery.MAX_REJECTED * 3):
        registry.reject(f"n{i}", "did not resolve")
    assert len(registry.rejected) == discovery.MAX_REJECTED
    assert f"n{discovery.MAX_REJECTED * 3 - 1}" in registry.rejected and "n0" not in registry.rejected


async def test_a_flood_of_announced_names_is_resolved_a_few_at_a_time():
    from zeroconf import DNSOutgoing, DNSPointer, const

    registry = PeerRegistry()
    zc = open_zeroconf(LOOPBACK)
    browser = PeerBrowser(zc, registry, resolve_timeout_ms=200)
    tag = uuid.uuid4().hex[:8]
    flood = 1000
    try:
        await zc.zeroconf.async_wait_for_start()
        await browser.start()
        for batch in range(flood // 50):
            out = DNSOutgoing(const._FLAGS_QR_RESPONSE | const._FLAGS_AA)
            for i in range(50):
                name = f"flood-{tag}-{batch}-{i}.{discovery.SERVICE_TYPE}"
                out.add_answer_at_time(
                    DNSPointer(discovery.SERVICE_TYPE, const._TYPE_PTR, const._CLASS_IN, 4500, name), 0
                )
            for datagram in out.packets():
                zc.zeroconf.engine.protocols[0].datagram_received(datagram, HERE)
            await asyncio.sleep(0.02)  # (the browser's handlers run on the loop, as between datagrams)
        most = 0
        loop = asyncio.get_running_loop()
        end = loop.time() + 30
        # until the browser has seen past its queue (or, unbounded, has let it grow past the bound)
        while registry.ignored == 0 and most <= BOUND and loop.time() < end:
            most = max(most, len(browser._jobs), len(browser.pending))
            await asyncio.sleep(0.01)
        assert registry.ignored > 0
        assert most <= BOUND and len(browser._jobs) <= BOUND and len(browser.pending) <= BOUND
        await browser.settle(30)
        assert len(registry.rejected) <= discovery.MAX_REJECTED
    finally:
        await browser.stop()
        await zc.async_close()


async def test_checks_ending_in_one_turn_never_hold_more_jobs_than_the_bound():
    """Many checks ending in the same turn of the loop each hand their place to a waiting name: the finished
    task is no longer held when its successor is (the done callback runs a turn later)."""
    browser = PeerBrowser(None, PeerRegistry(), resolve_timeout_ms=200)  # type: ignore[arg-type]
    most = 0

    async def check(name: str) -> None:
        nonlocal most
        most = max(most, len(browser._jobs), len(browser.pending))
        return None

    for i in range(discovery.MAX_PENDING * 3):
        browser._queue(f"n{i}.{discovery.SERVICE_TYPE}", check)
    assert len(browser._jobs) == discovery.MAX_PENDING
    for _ in range(200):
        most = max(most, len(browser._jobs))
        await asyncio.sleep(0)
    await browser.settle(10)
    assert most <= discovery.MAX_PENDING
    assert not browser.pending and not browser.waiting and not browser._jobs
