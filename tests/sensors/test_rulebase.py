"""rulebases/sensors.pl under the real policy guard (SWI-Prolog) in front of the sensors built-in."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = [pytest.mark.timeout(120), pytest.mark.parametrize("mode", ["legacy", "auto"])]


async def test_policy_tag_required_and_gps_confirmed_each_time(tmp_path, mode):
    from sentinel_mcp.app.runtime import running_gateway

    config = parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(tmp_path),
                "builtins": ["sensors"],
                "rulebases": [str(RULEBASES_DIR / "sensors.pl")],
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )
    questions: list[str] = []
    gps_answer = {"value": True}

    async def user(context, params):
        questions.append(params.message)
        if "answer" in params.requested_schema.get("properties", {}):  # the guard's confirmation
            return ElicitResult(action="accept", content={"answer": gps_answer["value"]})
        return ElicitResult(
            action="accept", content={"allow": True, "remember": "1 hour"}
        )  # the tool's consent

    async with running_gateway(config) as rt:
        assert not rt.problems
        async with Client(rt.front.server, mode=mode, elicitation_callback=user) as c:
            r = await c.call_tool("sensors__sensor_read", {"sensor": "location", "policy_tag": ""})
            assert (
                r.is_error and "a policy_tag saying why the data is needed is required" in r.content[0].text
            )
            assert questions == []

            r = await c.call_tool(
                "sensors__sensor_read",
                {"sensor": "battery", "scope": "standard", "policy_tag": "power-saving"},
            )
            assert not r.is_error and len(questions) == 1  # only the tool's consent question

            r = await c.call_tool(
                "sensors__sensor_read",
                {"sensor": "location", "scope": "detailed", "policy_tag": "navigation"},
            )
            assert not r.is_error and "altitude" in r.structured_content["payload"]
            assert questions[1] == 'Share your precise GPS location (detailed scope) for navigation?'
            assert questions[2].endswith(
                "to read your location at detailed scope for navigation (kept for 300 s)?")

            gps_answer["value"] = False
            r = await c.call_tool(
                "sensors__sensor_read",
                {"sensor": "location", "scope": "detailed", "policy_tag": "navigation-2"},
            )
            assert r.is_error and "payload" not in (r.structured_content or {})

            r = await c.call_tool("sensors__sensor_consent", {"action": "grant"})
            assert r.is_error and "a grant must name the sensor" in r.content[0].text
            r = await c.call_tool("sensors__sensor_consent", {"action": "list"})
            assert not r.is_error and {x["sensor"] for x in r.structured_content["consents"]} == {
                "battery",
                "location",
            }


async def test_nearby_addresses_locate_the_phone_and_are_confirmed_each_time(tmp_path, mode):
    """Detailed nearby devices are the access points' names and hardware addresses, which public Wi-Fi maps
    turn into a position as precise as GPS: the rulebase asks for them each time as it does for detailed
    location. Before, a stored nearby_devices consent at detailed scope read them with no question, around the
    "precise GPS needs the user's yes each time" rule."""
    from sentinel_mcp.app.runtime import running_gateway

    config = parse_config({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["sensors"],
        "rulebases": [str(RULEBASES_DIR / "sensors.pl")]}},
        source="<test>", base_dir=tmp_path)
    confirmations: list[str] = []
    answer = {"value": False}

    async def user(context, params):
        if "answer" in params.requested_schema.get("properties", {}):  # the guard's confirmation
            confirmations.append(params.message)
            return ElicitResult(action="accept", content={"answer": answer["value"]})
        return ElicitResult(action="accept", content={"allow": True, "remember": "1 hour"})

    async with running_gateway(config) as rt:
        assert not rt.problems
        async with Client(rt.front.server, mode=mode, elicitation_callback=user) as c:
            args = {"sensor": "nearby_devices", "scope": "detailed", "policy_tag": "find-the-printer"}
            r = await c.call_tool("sensors__sensor_read", args)
            assert r.is_error and "F4:5C" not in str(r.content)
            assert "payload" not in (r.structured_content or {})
            assert len(confirmations) == 1 and "find-the-printer" in confirmations[0]
            answer["value"] = True
            r = await c.call_tool("sensors__sensor_read", args)
            assert not r.is_error and r.structured_content["payload"]["devices"][0]["address"]
            assert len(confirmations) == 2
