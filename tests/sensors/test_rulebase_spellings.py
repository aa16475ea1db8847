"""rulebases/sensors.pl skips the user's confirmation only for an allow-listed (sensor, scope) pair spelled
exactly as the built-in's schema spells it, through the real gateway and SWI-Prolog. Before, the rule was a
deny list (`\\+ locates_precisely(Sensor, Scope)`): "Location", "detailed " or a fullwidth "ｄｅｔａｉｌｅｄ"
were not the denied atoms, so the guard let the read through with no question."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.core.sensor_kinds import SCOPED_SENSORS, Scope, SensorKind
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = [pytest.mark.timeout(240)]

SENSORS = ["Location", "LOCATION", "location ", " location", "location\u200b", "ｌｏｃａｔｉｏｎ",
           "location\n", ["location"], 1, {"name": "location"}, "Nearby_Devices", "nearby-devices",
           "nearby_devices\u00a0"]
SCOPES = ["Detailed", "DETAILED", "detailed ", "detailed\u200b", "ｄｅｔａｉｌｅｄ", "detailed\t",
          ["detailed"], 2, "detaile", "precise", None]
GUARD_REFUSAL = "not a sensor and scope the sensors built-in reads"
SCHEMA_REFUSAL = "invalid arguments for sensors__sensor_read"  # a list or a number: the schema, first


def _config(tmp_path):
    return parse_config({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["sensors"],
        "rulebases": [str(RULEBASES_DIR / "sensors.pl")]}},
        source="<test>", base_dir=tmp_path)


class User:
    """Declines the guard's confirmation (and counts it); allows the tool's own consent question."""

    def __init__(self) -> None:
        self.confirmations: list[str] = []

    async def __call__(self, context, params):
        if "answer" in params.requested_schema.get("properties", {}):
            self.confirmations.append(params.message)
            return ElicitResult(action="accept", content={"answer": False})
        return ElicitResult(action="accept", content={"allow": True, "remember": "1 hour"})


async def test_no_other_spelling_skips_the_confirmation(tmp_path):
    from sentinel_mcp.app.runtime import running_gateway

    user = User()
    calls = [{"sensor": s, "scope": "detailed", "policy_tag": "t"} for s in SENSORS]
    calls += [{"sensor": s, "scope": sc, "policy_tag": "t"} for s in ("location", "nearby_devices")
              for sc in SCOPES]
    async with running_gateway(_config(tmp_path)) as rt:
        assert not rt.problems
        async with Client(rt.front.server, mode="auto", elicitation_callback=user) as c:
            for args in calls:
                asked = len(user.confirmations)
                r = await c.call_tool("sensors__sensor_read", args)
                text = " ".join(getattr(b, "text", "") for b in r.content)
                assert r.is_error and "payload" not in (r.structured_content or {}), (args, text)
                # refused (the guard's allow list; a list or a number, the tool's schema), or (the exact pair)
                # confirmed: never let through unasked
                typed = isinstance(args["sensor"], str) and isinstance(args["scope"], str)
                refused = GUARD_REFUSAL in text or (not typed and SCHEMA_REFUSAL in text)
                assert refused or len(user.confirmations) == asked + 1, (args, text)


async def test_every_coarse_read_the_built_in_knows_needs_no_confirmation(tmp_path):
    """The allow list keeps every legitimate read working: each sensor at each scope but the two precise
    pairs reaches the built-in without the guard's question (whatever the built-in then answers), and the two
    precise pairs are asked about."""
    from sentinel_mcp.app.runtime import running_gateway

    user = User()
    async with running_gateway(_config(tmp_path)) as rt:
        assert not rt.problems
        async with Client(rt.front.server, mode="auto", elicitation_callback=user) as c:
            for kind in SensorKind:
                for scope in Scope:
                    precise = kind.value in ("location", "nearby_devices") and scope is Scope.detailed
                    r = await c.call_tool("sensors__sensor_read",
                                          {"sensor": kind.value, "scope": scope.value, "policy_tag": "t"})
                    text = " ".join(getattr(b, "text", "") for b in r.content)
                    assert GUARD_REFUSAL not in text, (kind, scope, text)
                    assert bool(user.confirmations) == precise, (kind, scope, user.confirmations)
                    user.confirmations.clear()
            r = await c.call_tool("sensors__sensor_read", {"sensor": "battery", "policy_tag": "t"})
            text = " ".join(getattr(b, "text", "") for b in r.content)
            assert GUARD_REFUSAL not in text and not user.confirmations  # no scope: the built-in's minimal
    assert {"location", "battery", "nearby_devices"} == SCOPED_SENSORS
