"""Who manages other principals' sensor consents: the owner as the gateway names it, or, standalone only, the
local user. A token principal the config names ``local`` is neither (the name is reserved, and behind the
gateway the name ``local`` grants nothing)."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors.server import create_server
from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.call_meta import PRINCIPAL_KEY, SESSION_KEY

pytestmark = [pytest.mark.timeout(60), pytest.mark.parametrize("mode", ["legacy", "auto"])]


GRANT_ALICE = {"action": "grant", "sensor": "location", "requester": "alice"}


async def _confirm(context, params):
    return ElicitResult(action="accept", content={"confirm": True})


@pytest.mark.parametrize("action", [
    {"action": "revoke", "requester": "alice"},
    {"action": "revoke", "requester": "alice", "sensor": "location"},
    {"action": "list", "requester": "alice"},
    {"action": "grant", "sensor": "location", "requester": "alice", "scope": "detailed"},
    {"action": "grant", "sensor": "camera", "requester": "*"},
])
async def test_local_behind_the_gateway_is_not_the_owner(tmp_path, mode, action):
    srv = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors"))
    async with Client(srv, mode=mode, elicitation_callback=_confirm) as c:
        r = await c.call_tool("sensor_consent", GRANT_ALICE)
        assert not r.is_error  # standalone, the local user (the client) is the owner
        owner = {SESSION_KEY: "s-owner", PRINCIPAL_KEY: "owner"}  # the owner as the gateway names it
        local = {SESSION_KEY: "s-local", PRINCIPAL_KEY: "local"}
        r = await c.call_tool("sensor_consent", action, meta=local)
        assert r.is_error and r.structured_content["error"] == "forbidden"
        listed = await c.call_tool("sensor_consent", {"action": "list"}, meta=local)
        assert listed.structured_content["consents"] == []  # its own (none), not everyone's
        listed = await c.call_tool("sensor_consent", {"action": "list"}, meta=owner)
        assert [x["requester"] for x in listed.structured_content["consents"]] == ["alice"]


async def test_standalone_local_user_still_manages(tmp_path, mode):
    srv = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors"))
    # no gateway: the client is the user
    async with Client(srv, mode=mode, elicitation_callback=_confirm) as c:
        r = await c.call_tool("sensor_consent", GRANT_ALICE)
        assert not r.is_error
        listed = await c.call_tool("sensor_consent", {"action": "list", "requester": "alice"})
        assert [x["requester"] for x in listed.structured_content["consents"]] == ["alice"]


def test_a_principal_cannot_be_named_local(tmp_path, mode):
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path), "principals": [
        {"name": "local", "token": "0123456789abcdef0"}]}}))
    with pytest.raises(ConfigError, match="'local' is reserved"):
        load_config(path)
