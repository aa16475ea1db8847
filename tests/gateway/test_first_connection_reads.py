"""resources/read and prompts/get route by the catalog as tools/call does: one that comes while the upstream
still makes its first connection waits for it too (first_connections.py), counted among its principal's
requests; a URI no upstream has is still not found, after the wait."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config
from .test_first_connection_calls import gated, wait_until

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_read_and_a_prompt_during_the_first_connection_wait_for_it(data_dir, tmp_path, mode):
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"tb": gated(gate)})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server, mode=mode) as c:
        got: dict[str, Any] = {}

        async def read(uri: str) -> None:
            try:
                got[uri] = (await c.read_resource(uri)).contents[0].text
            except MCPError as e:
                got[uri] = e

        async def prompt() -> None:
            got["prompt"] = (await c.get_prompt("tb__review", {"code": "x = 1"})).messages[0].content.text

        async with anyio.create_task_group() as tg:
            tg.start_soon(read, "toolbox://static")
            tg.start_soon(read, "toolbox://nothing")
            tg.start_soon(prompt)
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 3 or got)
            assert got == {} and rt.manager.upstreams["tb"].state == "connecting"
            gate.touch()
        assert got["toolbox://static"] == "static text"
        assert got["prompt"] == "Please review: x = 1"
        assert isinstance(got["toolbox://nothing"], MCPError), got
        assert rt.gateway.calls_in_flight.get("owner", 0) == 0
