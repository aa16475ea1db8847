"""A consent taken back takes its kept readings with it: after a revoke (the tool, the CLI, the registry) or a
grant at a narrower scope, ``sensor_retained`` no longer serves what the requester read under the old consent.
Before, a requester whose location consent was revoked fetched its GPS fixes for up to a day afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors.server import create_server
from sentinel_mcp.cli import main
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.call_meta import PRINCIPAL_KEY
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(60)


def req(sensor="location", scope="detailed", **kw) -> dict:
    return {"sensor": sensor, "scope": scope, "policy_tag": "location-for-search", "retention": 3600, **kw}


async def test_a_revoke_forgets_the_requesters_kept_readings(make_bridge, clock):
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed)
    bridge.consents.grant("agent-a", SensorKind.battery, Scope.minimal)
    bridge.consents.grant("agent-b", SensorKind.location, Scope.detailed)
    await bridge.handle(req(task_id="gps"), "agent-a")
    await bridge.handle(req("battery", "minimal", task_id="bat"), "agent-a")
    clock.advance(2)  # the sensor's rate limit
    await bridge.handle(req(task_id="b-gps"), "agent-b")
    assert bridge.consents.revoke("agent-a", SensorKind.location) == 1
    assert [r["response"]["task_id"] for r in bridge.vault.retained("agent-a")] == ["bat"]
    assert [r["response"]["task_id"] for r in bridge.vault.retained("agent-b")] == ["b-gps"]  # not its revoke
    bridge.consents.revoke("agent-a")  # every sensor
    assert bridge.vault.retained("agent-a") == []


async def test_a_narrower_grant_forgets_what_it_no_longer_covers(make_bridge, clock):
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed)
    await bridge.handle(req("location", "detailed", task_id="gps"), "agent-a")
    clock.advance(2)
    await bridge.handle(req("location", "minimal", task_id="city"), "agent-a")
    bridge.consents.grant("agent-a", SensorKind.location, Scope.minimal)  # the person narrows it
    assert [r["response"]["task_id"] for r in bridge.vault.retained("agent-a")] == ["city"]


async def test_revoking_the_any_requester_consent_forgets_readings_it_alone_covered(make_bridge, clock):
    bridge = make_bridge()
    bridge.consents.grant("*", SensorKind.battery, Scope.minimal)
    bridge.consents.grant("agent-c", SensorKind.battery, Scope.minimal)
    await bridge.handle(req("battery", "minimal", task_id="b"), "agent-b")
    clock.advance(2)
    await bridge.handle(req("battery", "minimal", task_id="c"), "agent-c")
    bridge.consents.revoke("*", SensorKind.battery)
    assert bridge.vault.retained("agent-b") == []
    assert [r["response"]["task_id"] for r in bridge.vault.retained("agent-c")] == ["c"]  # its own consent


async def test_through_the_tool_and_the_cli(tmp_path: Path, capsys):
    async def user(context, params):
        return ElicitResult(action="accept", content={"confirm": True})

    state = tmp_path / "state"
    srv = create_server(BuiltinContext(name="sensors", data_dir=state / "sensors", settings={}))
    meta = {PRINCIPAL_KEY: "agent-a"}
    async with Client(srv, elicitation_callback=user) as c:
        grant = {"action": "grant", "sensor": "location", "scope": "detailed", "requester": "agent-a"}
        assert not (await c.call_tool("sensor_consent", grant)).is_error
        assert not (await c.call_tool("sensor_read", req(task_id="t1"), meta=meta)).is_error
        kept = (await c.call_tool("sensor_retained", {}, meta=meta)).structured_content["readings"]
        assert [k["response"]["task_id"] for k in kept] == ["t1"]
        revoke = {"action": "revoke", "sensor": "location"}
        assert (await c.call_tool("sensor_consent", revoke, meta=meta)).structured_content["revoked"] == 1
        assert (await c.call_tool("sensor_retained", {}, meta=meta)).structured_content["readings"] == []

        grant |= {"sensor": "battery"}  # another sensor: location's rate limit is 1 Hz
        assert not (await c.call_tool("sensor_consent", grant)).is_error
        assert not (await c.call_tool("sensor_read", req("battery", task_id="t2"), meta=meta)).is_error
        kept = (await c.call_tool("sensor_retained", {}, meta=meta)).structured_content["readings"]
        assert [k["response"]["task_id"] for k in kept] == ["t2"]
        config = tmp_path / "sentinel.json"
        config.write_text(json.dumps({"mcpServers": {}, "sentinel": {"data_dir": str(state)}}))
        assert main(["-c", str(config), "sensors", "consent", "revoke", "--requester", "agent-a"]) == 0
        capsys.readouterr()
        assert (await c.call_tool("sensor_retained", {}, meta=meta)).structured_content["readings"] == []


async def test_an_expired_consent_takes_its_kept_readings_with_it(make_bridge, clock):
    """No revoke tells the bridge that a consent ran out: its readings are deleted when they are next asked
    for (they outlived it by their own retention, up to a day)."""
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed, expires_in=60)
    bridge.consents.grant("agent-a", SensorKind.battery, Scope.minimal)
    await bridge.handle(req(task_id="gps"), "agent-a")
    await bridge.handle(req("battery", "minimal", task_id="bat"), "agent-a")
    assert [r["response"]["task_id"] for r in bridge.retained("agent-a")] == ["gps", "bat"]
    clock.advance(61)  # the location consent has run out; the readings' retention (3600 s) has not
    assert [r["response"]["task_id"] for r in bridge.retained("agent-a")] == ["bat"]
    kept = bridge.vault.retained("agent-a")  # deleted, not only hidden
    assert [r["response"]["task_id"] for r in kept] == ["bat"]


async def test_the_sweeper_deletes_what_an_expired_consent_leaves_behind(make_bridge, clock):
    """A requester that never asks again: the readings of its expired consent are deleted by the retention
    sweep (the server runs it every ``sweep_interval``), not kept in the store for their own retention."""
    bridge = make_bridge()
    bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed, expires_in=60)
    bridge.consents.grant("agent-b", SensorKind.location, Scope.detailed)
    await bridge.handle(req(task_id="a-gps"), "agent-a")
    clock.advance(2)
    await bridge.handle(req(task_id="b-gps"), "agent-b")
    clock.advance(60)  # agent-a's consent has run out; both readings' retention (3600 s) has not
    bridge.vault.sweep()
    assert bridge.vault.count_all() == 1  # rows physically present
    assert [r["response"]["task_id"] for r in bridge.vault.retained()] == ["b-gps"]
