"""An upstream whose reading Sentinel itself paused (too many notices reaching no client: notice_budget.py) is
silent to the health check by Sentinel's choice, not its own: the ping's answer waits in the pipe behind the
paused notices. Its connection must not be cut for that silence (every call on it would fail, and the storm
would start again on the new connection). A real stdio upstream storming (``notice_storm_upstream.py``), a
pause far longer than the health window, down the lean path and the SDK's."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest

from sentinel_mcp.gateway import notice_budget
from sentinel_mcp.gateway.upstream import Upstream
from tests.gateway.test_lean_stdio import _with_upstream
from tests.gateway.test_listing_bounds import wait_until

pytestmark = pytest.mark.timeout(180)
HEALTH = 2.0  # seconds: the ping's window is at least 2 s


@pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
def test_a_pause_of_sentinels_own_is_no_silence_of_the_upstream(tmp_path: Path, lean: bool,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notice_budget, "PER_SECOND", 20.0)  # ~300 notices in buffers: pauses of ~15 s
    monkeypatch.setattr(notice_budget, "BURST", 10)
    monkeypatch.setenv("COUNT", str(tmp_path / "count"))
    monkeypatch.setenv("PAD", "2000")
    cmd = [sys.executable, "-m", "tests.gateway.notice_storm_upstream"]

    async def body(up: Upstream) -> None:
        assert not (await up.call_tool("storm", {})).is_error
        await wait_until(lambda: up.notice_budget.pauses >= 1)
        paused_at = time.monotonic()
        while time.monotonic() - paused_at < 4 * HEALTH:  # several whole windows, the reading paused
            assert up.reconnects == 0 and up.state == "ready", up.last_error
            await anyio.sleep(0.2)
        with anyio.fail_after(120):
            assert not (await up.call_tool("calm", {})).is_error
        assert up.reconnects == 0, up.last_error
        assert not (await up.call_tool("ping", {})).is_error

    anyio.run(lambda: _with_upstream(cmd, body, protocol="legacy", lean=lean, health_interval=HEALTH))
