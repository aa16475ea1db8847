"""The start-up mounts each built-in under the traits its server declares (core.builtin.BuiltinTraits), read
typed; a built-in whose server declares nothing is not mounted, and a problem says why (eagerly at start-up,
lazily at first use), while the others serve."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from sentinel_mcp.app.describe_builtins import default_without_upstreams
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core import builtin as builtin_registry
from sentinel_mcp.core.builtin import BuiltinTraits, traits_of

pytestmark = pytest.mark.timeout(120)


def _undeclared(ctx: Any) -> MCPServer:
    server = MCPServer("quiet")

    @server.tool()
    def swarm_validate(spec: dict[str, Any]) -> str:
        """A tool that must never be reached: its server broke the contract."""
        return "reached"

    return server  # no declare(): how the gateway should treat it is unknown


async def test_each_builtin_is_mounted_under_the_traits_it_declares(tmp_path, data_dir):
    async with running_gateway(default_without_upstreams(), lazy_builtins=False) as rt:
        assert rt.problems == []
        targets = {n: up.target for n, up in rt.manager.upstreams.items()}
        assert targets, "no built-in mounted"
        for name, target in targets.items():
            traits = traits_of(target.server)
            assert (target.protocol, target.result_meta, target.direct_tools) == (
                traits.protocol, traits.result_meta, traits.direct_tools), name
            assert target.timeout == max(300.0, traits.timeout), name
        assert set(targets) == {"sentinel", "device", "sensors", "llm", "swarm", "a2a", "agent"}
        assert targets["device"].result_meta == frozenset(
            {"sentinel/device-decision", "sentinel/personal_shown"})
        assert targets["llm"].direct_tools == frozenset(
            {"llm_generate", "llm_extract", "llm_classify_risk", "llm_status"})
        assert targets["agent"].protocol == "legacy" and traits_of(targets["agent"].server).timeout > 300
        plain = BuiltinTraits()  # the others declare the defaults
        assert all(traits_of(targets[n].server) == plain for n in ("sentinel", "sensors", "swarm", "a2a"))


@pytest.mark.parametrize("lazy", [False, True])
async def test_a_builtin_that_declares_nothing_is_not_mounted(tmp_path, data_dir, monkeypatch, lazy):
    here = "tests.gateway.test_builtin_traits_mounted:_undeclared"
    monkeypatch.setitem(builtin_registry.BUILTINS, "swarm", here)
    async with running_gateway(default_without_upstreams(), lazy_builtins=lazy) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("swarm__swarm_validate", {"spec": {}})
            names = {t.name for t in (await c.list_tools()).tools}
        assert result.is_error and "reached" not in str(result.content)
        assert [p for p in rt.problems if "swarm" in p] == [
            "built-in 'swarm' not started: BuiltinContractError: the built-in server MCPServer declares no "
            "traits (sentinel_mcp.core.builtin.declare)"
        ]
        assert not any(n.startswith("swarm__") for n in names) and "device__screen_read" in names
