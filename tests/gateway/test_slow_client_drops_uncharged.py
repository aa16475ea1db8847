"""What the notice queue drops for a client reading slower than its upstream writes is the client's pace, not
the upstream's flood: it is not charged to the upstream's notice budget. Charged, one principal's client that
never reads its call's progress would pause the reading of an upstream several principals share, and with it
every other principal's calls (gateway/notice_budget.py, docs/clients-and-installs.md)."""

from __future__ import annotations

import asyncio

from sentinel_mcp.config import RemoteServer
from sentinel_mcp.gateway.notice_budget import BURST
from sentinel_mcp.gateway.upstream import Upstream, UpstreamHooks


async def _nothing(_up: Upstream) -> None:
    return None


async def test_a_stuck_clients_dropped_notices_never_pause_its_upstream() -> None:
    up = Upstream("shared", RemoteServer(url="http://127.0.0.1:9/mcp", timeout=30),  # type: ignore[arg-type]
                  UpstreamHooks(catalog_changed=_nothing), health_interval=3600)
    stuck = asyncio.Event()  # the slow client: takes nothing

    async def deliver() -> None:
        await stuck.wait()

    for _ in range(3 * BURST):  # well past the budget's burst, at once
        up.notices.put("slow caller's call", "log", deliver)
        up.notices.put("slow caller's call", "progress", deliver)
    assert up.notices.dropped > BURST  # the queue did drop (and replace) for that client
    assert up.notice_budget.pauses == 0 and up.notice_budget.wait() == 0.0
    stuck.set()
