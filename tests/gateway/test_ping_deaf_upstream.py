"""An upstream that answers every call but never the gateway's health ping, while it keeps writing (a log line
each 0.1 s): its connection was kept for ever, shown "ready", because each health window heard something
from it. A late answer behind a busy upstream's writes is still taken (test_busy_upstream_health.py), but a
ping left unanswered for ``PING_PATIENCE`` windows in a row in which it wrote and Sentinel read it is an
upstream that does not answer: its connection is cut and made again, and the reason shown. A real stdio
upstream (``ping_deaf_upstream.py``), down the lean path (whose reads count as hearing it)."""

from __future__ import annotations

import sys

import anyio
import pytest

from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.test_lean_stdio import _with_upstream

pytestmark = pytest.mark.timeout(180)
HEALTH = 2.0


def test_an_upstream_that_writes_but_never_answers_a_ping_is_cut() -> None:
    cmd = [sys.executable, "-m", "tests.gateway.ping_deaf_upstream"]
    reasons: list[str | None] = []

    async def body(up: Upstream) -> None:
        assert (await up.call_tool("noop", {})).content[0].text == "ok"
        with anyio.fail_after(90):  # its patience: 6 windows of 2 s
            while up.reconnects == 0:
                reasons.append(up.last_error)
                await anyio.sleep(0.05)
        reasons.append(up.last_error)
        assert await up.wait_ready(60), up.last_error
        assert (await up.call_tool("noop", {})).content[0].text == "ok"  # its next connection works

    anyio.run(lambda: _with_upstream(cmd, body, protocol="legacy", health_interval=HEALTH))
    assert any(r and "not answered" in r for r in reasons), reasons
