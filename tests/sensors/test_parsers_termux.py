"""Parsers on recorded termux-api JSON outputs."""

from __future__ import annotations

import pytest
from tests.sensors.sensors_support import recorded

from device_tools.sensors.errors import MalformedOutput, NoReading, SourceUnavailable
from device_tools.sensors.parsers.termux_json import (
    parse_termux_battery,
    parse_termux_location,
    parse_termux_sensor_list,
    parse_termux_sensor_sample,
    parse_termux_wifi_scan,
)


def test_location():
    loc = parse_termux_location(recorded("termux_location.json"))
    assert loc == {
        "latitude": 52.5200066,
        "longitude": 13.404954,
        "altitude": 34.0,
        "horizontalAccuracy": 12.0,
        "verticalAccuracy": 3.0,
        "speed": 0.0,
        "bearing": 0.0,
        "provider": "gps",
        "ageSeconds": 0.84,
    }


def test_location_before_api_26_has_no_vertical_accuracy():
    loc = parse_termux_location(recorded("termux_location_api26_missing_vacc.json"))
    assert loc["verticalAccuracy"] is None and loc["ageSeconds"] == 12.0  # elapsedMs IS the age here


def test_location_api_error_null_fix():
    with pytest.raises(NoReading, match="no location fix"):
        parse_termux_location(recorded("termux_location_error.json"))


def test_other_api_error_is_source_unavailable():
    with pytest.raises(SourceUnavailable, match="Termux:API error"):
        parse_termux_location('{"API_ERROR": "Unsupported provider: foo"}')


def test_battery():
    b = parse_termux_battery(recorded("termux_battery.json"))
    assert b["percentage"] == 87.0 and b["charging"] is True and b["plugged"] == "usb"
    assert b["health"] == "good" and b["voltage_mv"] == 4215.0 and b["temperature_c"] == pytest.approx(29.3)


def test_sensor_list_and_sample_skipping_the_empty_first_object():
    names = parse_termux_sensor_list(recorded("termux_sensor_list.json"))
    assert "ICM45631 Accelerometer" in names and len(names) == 8
    assert parse_termux_sensor_sample(recorded("termux_sensor_accel.json"), "ICM45631 Accelerometer") == [
        0.11,
        9.79,
        0.21,
    ]
    with pytest.raises(NoReading):
        parse_termux_sensor_sample("{}", "ICM45631 Accelerometer")


@pytest.mark.parametrize(
    "text", [recorded("termux_not_json.txt"), "", "[1, 2]", '{"latitude": "north"}', '{"latitude": 1.0']
)
def test_malformed(text):
    with pytest.raises(MalformedOutput):
        parse_termux_location(text)


def test_malformed_sensor_values():
    with pytest.raises(MalformedOutput):
        parse_termux_sensor_sample('{"Light": {"values": ["bright"]}}', "Light")
    with pytest.raises(MalformedOutput):
        parse_termux_sensor_list('{"sensors": "all"}')


def test_wifi_scan_as_nearby_devices():
    nearby = parse_termux_wifi_scan(recorded("termux_wifi_scaninfo.json"))
    assert nearby == {
        "devices": [
            {"name": "CoffeeShop-Guest", "address": "3c:84:6a:9e:10:22", "kind": "wifi", "rssi": -71.0},
            {"name": None, "address": "f4:5c:89:12:ab:01", "kind": "wifi", "rssi": -48.0},
        ]
    }  # hidden SSID
    assert parse_termux_wifi_scan("[]") == {"devices": []}
    with pytest.raises(SourceUnavailable, match="Termux:API error"):
        parse_termux_wifi_scan('{"API_ERROR": "Location needs to be enabled on the device"}')
    for bad in ("", "[1, 2]", '{"ssid": "x"}', "not json"):
        with pytest.raises(MalformedOutput):
            parse_termux_wifi_scan(bad)
