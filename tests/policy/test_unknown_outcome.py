"""A write sent upstream whose result never came (the gateway timed it out, or the caller gave up) may have
run: what its effects change is no longer known to the guard, which asks the upstream again before the next
call. Before, the guard kept its old facts, so a second cancel of a booking the first had already cancelled
was decided on "confirmed" and ran twice."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.upstream_marker import give_up_once_marked, marked, once_marked

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent


def config(tmp: Path, slow: float, timeout: float) -> Any:
    env = {"STATE": str(tmp / "state.json"), "MARKER": str(tmp / "marker"), "SLOW": str(slow)}
    server = {"command": sys.executable, "args": [str(HERE / "slow_write_server.py")], "env": env,
              "timeout": timeout}
    sentinel = {"rulebases": [str(HERE / "rulebases" / "slow_write.pl")], "builtins": [],
                "data_dir": str(tmp / "data")}
    return parse_config({"mcpServers": {"bk": server}, "sentinel": sentinel}, base_dir=str(tmp))


def ran(tmp: Path) -> list[str]:
    return marked(tmp / "marker")


# the handshake era: one conversation over both calls, so its facts outlive the first (a 2026-07-28 client
# without a conversation id starts afresh with each call)
@pytest.mark.parametrize("how", ["gateway_timeout", "caller_gives_up"])
async def test_a_write_whose_result_never_came_is_not_decided_on_again_with_old_facts(
    tmp_path: Path, how: str
) -> None:
    (tmp_path / "state.json").write_text(json.dumps({"BK-1": "confirmed"}))
    timeout = 1.0 if how == "gateway_timeout" else 60.0
    async with running_gateway(config(tmp_path, slow=4.0, timeout=timeout)) as rt:
        # the write must reach the upstream: a loaded machine may start it after the gateway's start-up wait
        assert await rt.manager.upstreams["bk"].wait_ready(60), rt.manager.upstreams["bk"].last_error
        async with Client(rt.front.server, mode="legacy") as c:
            if how == "gateway_timeout":
                first = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-1"})
                assert first.is_error, first.content
            else:  # the caller gives up; the upstream did it all the same
                await give_up_once_marked(tmp_path / "marker",
                                          lambda: c.call_tool("bk__cancel_booking", {"booking_id": "BK-1"}))
            assert await once_marked(tmp_path / "marker") == ["BK-1"]
            again = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-1"})
            assert again.is_error and "only confirmed" in again.content[0].text, again.content[0].text
    assert ran(tmp_path) == ["BK-1"]  # never twice
