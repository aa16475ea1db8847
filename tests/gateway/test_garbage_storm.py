"""An stdio upstream writing, as fast as its pipe takes them, lines that are no JSON-RPC message (not JSON, a
notification whose method is a number) and answers to ids never asked (one in the lean calls' range, one
the SDK's, one a string): none of it reaches a client, yet each line cost a parse, a log line and (an
answer) a look-up. Each is now charged to the upstream's notice budget (gateway/notice_budget.py), so its
reading pauses past it, down the lean tap and down the SDK's own reader (gateway/paced_reading.py); how it
answers again once it stops: test_notice_storm.py. Before, none of it was charged: ``pauses`` stayed 0
whatever it wrote. A real stdio upstream (``notice_storm_upstream.py``, ``GARBAGE=1``)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.test_lean_stdio import _with_upstream
from tests.gateway.test_listing_bounds import wait_until

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("lean", [True, False])
def test_a_storm_of_garbage_and_unasked_answers_pauses_the_reading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lean: bool) -> None:
    monkeypatch.setattr(notice_budget, "PER_SECOND", 50.0)
    monkeypatch.setattr(notice_budget, "BURST", 100)
    # the SDK gives a process only a few of the environment's variables: these go through env(1)
    cmd = ["env", f"COUNT={tmp_path / 'count'}", "GARBAGE=1", sys.executable, "-m",
           "tests.gateway.notice_storm_upstream"]

    async def body(up: Upstream) -> None:
        assert not (await up.call_tool("storm", {})).is_error
        await wait_until(lambda: up.notice_budget.pauses >= 1)
        await anyio.sleep(1)
        assert up.notice_budget.pause_until > 0  # still storming, still paced
        assert up.reconnects == 0 and up.state == "ready", up.last_error  # paced, not cut

    anyio.run(lambda: _with_upstream(cmd, body, protocol="legacy", lean=lean))
