"""A battery field the phone did not report (a placeholder, parsed as ``null``) is shown as unknown: the
scope's redaction dropped every ``null`` from the answer, so the model read "charging" as missing (withheld,
or not charging) rather than unknown. It is now ``null`` and named in the payload's ``unknown`` list, while a
field the scope withholds is still never shown, nor said to be unknown. Through the real bridge over the
Termux source, its termux-api commands run as subprocesses printing placeholders."""

from __future__ import annotations

import json

import pytest

from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from tests.sensors.test_termux_source import script

BATTERY = {"present": True, "technology": "Li-ion", "health": "GOOD", "plugged": "PLUGGED_USB",
           "status": "CHARGING", "temperature": 29.3, "voltage": 4215, "current": -250000, "percentage": 87}
WITHHELD = {Scope.minimal: {"charging", "status", "plugged", "health", "temperature_c", "voltage_mv",
                            "technology", "present"},
            Scope.standard: {"health", "temperature_c", "voltage_mv", "technology", "present"},
            Scope.detailed: set()}


async def read(tmp_path, make_bridge, printed: dict, scope: Scope) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script(bin_dir, "termux-battery-status", f"echo '{json.dumps(printed)}'")
    bridge = make_bridge(TermuxSource(str(bin_dir), timeout=10))
    bridge.consents.grant("agent-a", SensorKind.battery, scope)
    resp = await bridge.handle({"sensor": "battery", "scope": scope.value, "policy_tag": "status"}, "agent-a")
    return json.loads(json.dumps(resp.payload, allow_nan=False))  # as the model reads it: strict JSON


@pytest.mark.parametrize("scope", list(Scope))
@pytest.mark.parametrize("placeholder", ["-", "", "?", "null", "N/A"])
async def test_an_unknown_battery_field_is_shown_as_unknown(tmp_path, make_bridge, scope, placeholder):
    printed = BATTERY | {"status": placeholder, "temperature": placeholder, "voltage": placeholder,
                         "technology": placeholder, "present": placeholder}
    payload = await read(tmp_path, make_bridge, printed, scope)
    assert payload["percentage"] == 87.0
    shown_null = {"charging", "temperature_c", "voltage_mv", "technology", "present"} - WITHHELD[scope]
    for field in shown_null:
        assert field in payload and payload[field] is None, (field, payload)
    assert sorted(payload.get("unknown", [])) == sorted(shown_null), payload
    # withheld by the scope: neither its value nor that it is unknown
    assert not (WITHHELD[scope] & set(payload)), payload
    assert not (WITHHELD[scope] & set(payload.get("unknown", []))), payload


@pytest.mark.parametrize("scope", list(Scope))
async def test_known_fields_have_no_unknown_list_and_the_scope_still_withholds(tmp_path, make_bridge, scope):
    payload = await read(tmp_path, make_bridge, BATTERY, scope)
    assert "unknown" not in payload and None not in payload.values(), payload
    assert not (WITHHELD[scope] & set(payload)), payload
    assert payload["percentage"] == 87.0
