"""An upstream over the legacy HTTP+SSE transport writes thousands of notices that reach no client at once
(progress under tokens naming no call, of every shape; "updated" of resources nobody subscribed to): each is
counted and charged to its notice budget, the SSE stream is read at the budget's pace (the SDK's transport,
paced: gateway/paced_reading.py), and the call's answer after the flood comes, as does the next call's. A
real SDK server over real HTTP on 127.0.0.1 (tests/gateway/sse_storm_upstream.py)."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.test_lean_upstream import _serve, _with_upstream

from ..conftest import free_port, stop_process

pytestmark = pytest.mark.timeout(240)
N = 2_000  # of each kind
PER_SECOND, BURST = 1_000.0, 100


async def test_an_sse_upstream_flooding_notices_to_nobody_is_charged_and_paced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notice_budget, "PER_SECOND", PER_SECOND)
    monkeypatch.setattr(notice_budget, "BURST", BURST)
    port = free_port()
    proc = _serve([sys.executable, "-m", "tests.gateway.sse_storm_upstream", str(port)], port)

    async def body(up: Upstream) -> Any:
        assert up.target.kind == "sse"
        unrouted, updates, charged = up.pushes_unrouted, up.updates_unsubscribed, up.notice_budget.charged
        r = await up.call_tool("storm", {"n": N})
        with anyio.fail_after(60):  # a bound, no timing asserted: the last notices may still be being read
            while up.updates_unsubscribed - updates < N or up.pushes_unrouted - unrouted < N:
                await anyio.sleep(0.05)
        after = await up.call_tool("echo", {"text": "after"})
        return (r, after, up.pushes_unrouted - unrouted, up.updates_unsubscribed - updates,
                up.notice_budget.charged - charged, up.notice_budget.pauses, up.reconnects)

    try:
        r, after, unrouted, updates, charged, pauses, reconnects = await _with_upstream(
            f"http://127.0.0.1:{port}/sse", body, protocol="legacy", lean=False)
    finally:
        stop_process(proc)
    assert not r.is_error and r.content[0].text == "stormed", r
    assert not after.is_error and after.content[0].text == "after", after
    assert (unrouted, updates) == (N, N)
    assert charged >= 2 * N, charged
    assert pauses >= 1 and reconnects == 0
