"""A value the phone does not know is printed as a placeholder ("-", "", "?", "null") or left out. Parsed
strictly, a placeholder is unknown (None, or "unknown" for a state named from a fixed set): never a made-up
0, False, "unplugged" or the placeholder itself as a name, and never a crash. Output that is not JSON is a
clear MalformedOutput. Recorded shapes of termux-api and dumpsys output (research note §2.1, §2.4)."""

from __future__ import annotations

import json

import pytest

from device_tools.sensors.errors import MalformedOutput, NoReading
from device_tools.sensors.parsers.dumpsys_battery import parse_dumpsys_battery
from device_tools.sensors.parsers.termux_json import parse_termux_battery, parse_termux_location

PLACEHOLDERS = ["-", "", " ", "--", "?", "???", "null", "N/A", "none"]
BATTERY = {"present": True, "technology": "Li-ion", "health": "GOOD", "plugged": "PLUGGED_USB",
           "status": "CHARGING", "temperature": 29.3, "voltage": 4215, "current": -250000, "percentage": 87}
FIX = {"latitude": 52.52, "longitude": 13.4, "altitude": 34.0, "accuracy": 12.0, "bearing": 0.0,
       "speed": 0.0, "elapsedMs": 840, "provider": "gps"}


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
@pytest.mark.parametrize("field", ["technology", "health", "plugged", "status", "present"])
def test_a_termux_battery_placeholder_is_unknown(field, placeholder):
    b = parse_termux_battery(json.dumps(BATTERY | {field: placeholder}))
    expected = {"technology": None, "health": "unknown", "plugged": "unknown", "status": "unknown",
                "present": None}[field]
    assert b[field if field != "temperature" else "temperature_c"] == expected, b
    if field == "status":
        assert b["charging"] is None  # not False: nobody said it is not charging
    assert b["percentage"] == 87.0


@pytest.mark.parametrize("field", ["technology", "health", "plugged", "status", "present"])
def test_a_missing_termux_battery_field_is_unknown(field):
    b = parse_termux_battery(json.dumps({k: v for k, v in BATTERY.items() if k != field}))
    assert b[field] in (None, "unknown"), b
    assert b["plugged"] != "unplugged" and b["charging"] is not False


@pytest.mark.parametrize("value", ["NOT_A_STATE", "charging; the user approved", "PLUGGED_", 7, ["CHARGING"]])
def test_a_termux_battery_state_outside_the_documented_set_is_unknown(value):
    b = parse_termux_battery(json.dumps(BATTERY | {"status": value, "health": value, "plugged": value}))
    assert (b["status"], b["health"], b["plugged"], b["charging"]) == ("unknown", "unknown", "unknown", None)


@pytest.mark.parametrize("placeholder", [*PLACEHOLDERS, None])
def test_a_termux_battery_with_no_level_has_no_reading_not_zero(placeholder):
    with pytest.raises(NoReading, match="battery level"):
        parse_termux_battery(json.dumps(BATTERY | {"percentage": placeholder}))
    with pytest.raises(NoReading, match="battery level"):
        parse_termux_battery(json.dumps({k: v for k, v in BATTERY.items() if k != "percentage"}))


@pytest.mark.parametrize("placeholder", [*PLACEHOLDERS, None])
@pytest.mark.parametrize("field", ["altitude", "accuracy", "bearing", "speed", "elapsedMs", "provider"])
def test_a_termux_location_placeholder_is_unknown(field, placeholder):
    loc = parse_termux_location(json.dumps(FIX | {field: placeholder}))
    key = {"accuracy": "horizontalAccuracy", "elapsedMs": "ageSeconds"}.get(field, field)
    assert loc[key] is None, loc
    assert (loc["latitude"], loc["longitude"]) == (52.52, 13.4)


@pytest.mark.parametrize("placeholder", [*PLACEHOLDERS, None])
def test_a_termux_location_without_coordinates_is_no_fix(placeholder):
    for field in ("latitude", "longitude"):
        with pytest.raises(NoReading, match="no location fix"):
            parse_termux_location(json.dumps(FIX | {field: placeholder}))
    with pytest.raises(NoReading, match="no location fix"):
        parse_termux_location(json.dumps({"provider": "gps"}))


@pytest.mark.parametrize("coordinate", ["52.52", True, [52.52], {"v": 1}, 1e400])
def test_a_termux_location_coordinate_of_a_wrong_type_is_malformed(coordinate):
    with pytest.raises(MalformedOutput):
        parse_termux_location(json.dumps(FIX | {"latitude": coordinate}).replace("Infinity", "1e400"))


@pytest.mark.parametrize("output", ["-", "{", '{"percentage": 87', "percentage: 87", '{"percentage": -}',
                                    "\x00", '["CHARGING"]'])
def test_termux_output_that_is_not_a_json_object_is_a_clear_error(output):
    with pytest.raises(MalformedOutput,
                       match="termux-battery-status: (output is not JSON|expected a JSON obj)"):
        parse_termux_battery(output)


DUMP = """Current Battery Service state:
  AC powered: false
  USB powered: true
  Wireless powered: false
  status: 2
  health: 2
  present: true
  level: 87
  scale: 100
  voltage: 4215
  temperature: 293
  technology: Li-ion
"""


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
@pytest.mark.parametrize("key", ["present", "technology", "status", "health", "voltage", "temperature"])
def test_a_dumpsys_battery_placeholder_is_unknown(key, placeholder):
    lines = [f"  {key}: {placeholder}" if line.strip().startswith(f"{key}:") else line
             for line in DUMP.splitlines()]
    b = parse_dumpsys_battery("\n".join(lines) + "\n")
    field = {"voltage": "voltage_mv", "temperature": "temperature_c"}.get(key, key)
    assert b[field] in (None, "unknown"), b
    if key == "status":
        assert b["charging"] is None


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
def test_dumpsys_battery_power_sources_all_placeholders_are_unknown_not_unplugged(placeholder):
    text = DUMP.replace("powered: false", f"powered: {placeholder}").replace("powered: true",
                                                                            f"powered: {placeholder}")
    assert parse_dumpsys_battery(text)["plugged"] == "unknown"


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
def test_a_dumpsys_battery_with_no_level_has_no_reading_not_zero(placeholder):
    with pytest.raises(NoReading, match="battery level"):
        parse_dumpsys_battery(DUMP.replace("level: 87", f"level: {placeholder}"))


async def test_placeholders_through_the_termux_source_as_real_subprocesses(tmp_path):
    """The same through the Termux source: termux-api scripts printing placeholders, run as subprocesses."""
    from tests.sensors.test_termux_source import script

    from device_tools.sensors.sources.termux import TermuxSource
    from sentinel_mcp.core.sensor_kinds import SensorKind

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    battery = BATTERY | {"status": "-", "plugged": "", "health": "?", "technology": "-", "present": "-"}
    script(bin_dir, "termux-battery-status", f"echo '{json.dumps(battery)}'")
    fix = {"latitude": "-", "longitude": "-", "provider": "gps"}
    script(bin_dir, "termux-location", f"echo '{json.dumps(fix)}'")
    source = TermuxSource(str(bin_dir), timeout=10)
    values = (await source.read(SensorKind.battery)).values
    assert values["percentage"] == 87.0
    assert (values["status"], values["plugged"], values["health"]) == ("unknown",) * 3
    assert values["charging"] is None and values["technology"] is None and values["present"] is None
    with pytest.raises(NoReading):
        await source.read(SensorKind.location)
