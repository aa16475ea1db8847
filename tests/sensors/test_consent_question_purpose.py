"""The sensors' consent question shows what the person is agreeing to: who reads which sensor at which scope,
for which purpose (the request's ``policy_tag``) and how long the reading is kept. A yes is a yes to that: a
2026-era client that got the person's yes to one purpose and calls again stating another purpose, or a longer
retention, reads nothing and is granted nothing (the gateway binds the round's state to the arguments, as the
SDK's sealed state does run alone). Before, the question named neither: the person said yes, and "remember
for a day", to a purpose they were never shown. Through the real gateway and the real mcp Client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.server import create_server
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.gateway.upstream import BuiltinTarget

pytestmark = pytest.mark.timeout(90)
SHOWN = {"sensor": "location", "scope": "standard", "policy_tag": "location-for-search", "retention": 0}
YES = ElicitResult(action="accept", content={"allow": True, "remember": "1 day"})


def consents(ctx: BuiltinContext) -> list[Any]:
    db = SensorDatabase(ctx.data_dir)
    try:
        return ConsentRegistry(db).list(None)
    finally:
        db.close()


async def user(ctx: Any, params: Any) -> ElicitResult:
    return YES


@pytest.mark.parametrize("changed", [{"policy_tag": "location-for-tracking"}, {"retention": 86_400}],
                         ids=["purpose", "retention"])
async def test_a_yes_to_one_purpose_reads_nothing_for_another(tmp_path: Path, changed: dict[str, Any]):
    ctx = BuiltinContext(name="sensors", data_dir=tmp_path / "sensors", settings={})
    ctx.data_dir.mkdir()
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": []}},
                          source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        up = rt.manager.add("sn", BuiltinTarget(server=create_server(ctx), protocol="modern"))
        assert await up.wait_ready(20), up.last_error
        async with Client(rt.front.server, mode="auto", elicitation_callback=user) as c:
            first = await c.session.call_tool("sn__sensor_read", SHOWN, allow_input_required=True)
            assert type(first).__name__ == "InputRequiredResult", first
            [(key, request)] = first.input_requests.items()
            shown = request.params.message
            assert "location-for-search" in shown and "not kept" in shown, shown
            swapped = await c.session.call_tool(
                "sn__sensor_read", SHOWN | changed, allow_input_required=True, input_responses={key: YES},
                request_state=first.request_state, meta=first.meta or None,
            )
            # the gateway binds the answer to the arguments it was asked for; the built-in's question, to
            # what it shows: either way nothing is read and nothing remembered
            refused = type(swapped).__name__ == "InputRequiredResult" or swapped.is_error
            assert refused and "payload" not in str(swapped), swapped
            assert consents(ctx) == []

