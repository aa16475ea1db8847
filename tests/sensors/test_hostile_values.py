"""Values no reading or consent may hold: NaN, infinities, out-of-range coordinates, objects where names go.

A consent's ``expires_in`` must be a finite number above 0 (NaN passed ``<= 0`` and SQLite stored it as NULL,
"until revoked"). A reading's numbers must be finite, its coordinates in range and its names short strings:
checked by the termux parsers and again by the bridge for every source, so the text result stays strict JSON
and nothing odd is kept."""

from __future__ import annotations

import json
import math

import pytest
from tests.sensors.test_cli import config_file, run  # noqa: F401 - the fixture is used by name

from device_tools.sensors.errors import MalformedOutput
from device_tools.sensors.parsers.termux_json import (
    parse_termux_battery,
    parse_termux_location,
    parse_termux_sensor_sample,
    parse_termux_wifi_scan,
)
from device_tools.sensors.reading import Reading
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(60)
BAD_EXPIRY = [math.nan, math.inf, -math.inf, 0, -1, -0.0, True, "3600", [3600]]


@pytest.mark.parametrize("expires_in", BAD_EXPIRY)
def test_registry_refuses_a_non_finite_expiry(expires_in, make_bridge):
    bridge = make_bridge()
    with pytest.raises(ValueError, match="finite positive"):
        bridge.consents.grant("agent-a", SensorKind.location, Scope.minimal, expires_in)
    assert bridge.consents.list() == []


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "0", "-5"])
def test_cli_refuses_a_non_finite_expiry(text, config_file, capsys):  # noqa: F811
    code, out, err = run(capsys, "-c", str(config_file), "sensors", "consent", "grant", "location",
                         "--requester", "agent-a", f"--expires-in={text}")
    assert code == 2 and out is None and "finite positive" in err
    code, out, _ = run(capsys, "-c", str(config_file), "sensors", "consent", "list")
    assert code == 0 and out["consents"] == []


FIX = {"latitude": 47.5, "longitude": 8.5, "provider": "gps"}


@pytest.mark.parametrize("text", [
    '{"latitude": NaN, "longitude": 8.5}',
    '{"latitude": 47.5, "longitude": Infinity}',
    '{"latitude": -Infinity, "longitude": 8.5}',
    '{"latitude": 1e400, "longitude": 8.5}',
    '{"latitude": 91.0, "longitude": 8.5}',
    '{"latitude": 47.5, "longitude": -180.5}',
    '{"latitude": "47.5", "longitude": 8.5}',
    '{"latitude": true, "longitude": 8.5}',
    '{"latitude": 47.5, "longitude": [8.5]}',
])
def test_termux_location_refuses_hostile_coordinates(text):
    with pytest.raises(MalformedOutput):
        parse_termux_location(text)


@pytest.mark.parametrize("extra", [
    {"altitude": float("nan")}, {"accuracy": float("inf")}, {"speed": -float("inf")}, {"bearing": 10**400},
])
def test_termux_location_drops_non_finite_extras(extra):
    text = json.dumps(FIX | extra)  # json writes NaN/Infinity, as a hostile termux-api could
    loc = parse_termux_location(text)
    assert all(v is None or isinstance(v, str) or math.isfinite(v) for v in loc.values())
    json.dumps(loc, allow_nan=False)


@pytest.mark.parametrize("provider", [{"nested": ["x"] * 1000}, ["gps"], 7, "g" * 100_000])
def test_termux_names_are_short_strings(provider):
    assert parse_termux_location(json.dumps(FIX | {"provider": provider}))["provider"] is None
    battery = parse_termux_battery(json.dumps({"percentage": 50, "technology": provider, "status": provider}))
    assert battery["technology"] is None and battery["status"] == "unknown"
    ap = parse_termux_wifi_scan(json.dumps([{"ssid": provider, "bssid": provider, "rssi": -40}]))
    assert ap["devices"][0]["name"] is None and ap["devices"][0]["address"] is None


@pytest.mark.parametrize("text", ['{"percentage": NaN}', '{"percentage": Infinity}', '{"percentage": 250}',
                                  '{"percentage": -1}', '{"percentage": "50"}'])
def test_termux_battery_refuses_hostile_percentage(text):
    with pytest.raises(MalformedOutput):
        parse_termux_battery(text)


@pytest.mark.parametrize("values", ["[NaN, 1.0, 2.0]", "[1.0, Infinity, 2.0]", "[1e400]", '["1.0"]',
                                    "[true]", "[]"])
def test_termux_sensor_values_must_be_finite(values):
    with pytest.raises(MalformedOutput):
        parse_termux_sensor_sample(f'{{"Accel": {{"values": {values}}}}}', "Accel")


class Hostile:
    """A source whose reading breaks the reading's shape (any source: adb, simulated, a future one)."""

    name = "hostile"

    def __init__(self, values: dict) -> None:
        self.values = values

    async def read(self, sensor):
        return Reading(sensor=sensor, values=self.values, taken_at=1_700_000_000.0, source=self.name)


@pytest.mark.parametrize("values", [
    FIX | {"altitude": math.nan},
    FIX | {"speed": math.inf},
    FIX | {"latitude": 95.0},
    FIX | {"longitude": -math.inf},
    FIX | {"latitude": "47.5"},
    FIX | {"provider": "p" * 10_000},
    FIX | {"provider": {"a": {"b": {"c": {"d": {"e": 1}}}}}},
    FIX | {"provider": object()},
    FIX | {"ageSeconds": 10**30},
    FIX | {"extras": list(range(10_000))},
])
async def test_the_bridge_refuses_a_reading_of_the_wrong_shape(values, make_bridge):
    bridge = make_bridge(Hostile(values))
    bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed)
    with pytest.raises(MalformedOutput):
        await bridge.handle({"sensor": "location", "scope": "detailed", "policy_tag": "t"}, "agent-a")
    assert bridge.audit.rows()[-1]["decision"] == "failed"
    assert bridge.vault.retained("agent-a") == []
