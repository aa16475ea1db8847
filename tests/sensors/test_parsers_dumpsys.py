"""Parsers on recorded ``adb shell dumpsys`` outputs, including the caveats of research note §2."""

from __future__ import annotations

import pytest
from tests.sensors.sensors_support import recorded

from device_tools.sensors.errors import MalformedOutput, NoReading
from device_tools.sensors.parsers.dumpsys_battery import parse_dumpsys_battery
from device_tools.sensors.parsers.dumpsys_location import best_fix, parse_dumpsys_location, parse_uptime
from device_tools.sensors.parsers.dumpsys_sensorservice import (
    latest_event_for,
    parse_recent_events,
    parse_sensor_list,
)
from device_tools.sensors.parsers.numbers import android_duration_ms


def test_location_picks_freshest_fix_and_reads_every_field():
    fix = best_fix(recorded("dumpsys_location_aosp.txt"))
    assert fix.provider == "gps"
    assert (fix.latitude, fix.longitude) == (52.5201, 13.405)
    assert fix.altitude == 35.2 and fix.horizontal_accuracy == 4.8 and fix.vertical_accuracy == 2.1
    assert fix.speed == 1.2 and fix.bearing == 87.5
    assert fix.elapsed_realtime_ms == ((2 * 60 + 17) * 60 + 10) * 1000 + 384


def test_et_is_a_boot_stamp_not_the_age():
    fix = best_fix(recorded("dumpsys_location_aosp.txt"))
    uptime = parse_uptime(recorded("proc_uptime.txt"))
    assert uptime == 8245.61
    # naive reading of et= would claim the fix is 2 h 17 min old; it is 15 s old
    assert fix.age_seconds(uptime) == pytest.approx(8245.61 - 8230.384)
    assert fix.age_seconds(None) is None


def test_nested_bundle_location_and_oem_lines_do_not_confuse_the_parser():
    fixes = parse_dumpsys_location(recorded("dumpsys_location_aosp.txt"))
    providers = [f.provider for f in fixes]
    # passive(fused) + its coarse, network (its bundle holds a nested Location[...]), gps + coarse; fused=null
    assert providers == ["fused", "fused", "network", "gps", "gps"]
    assert fixes[2].altitude is None and fixes[2].horizontal_accuracy == 40.0


def test_decimal_comma_locale():
    fix = best_fix(recorded("dumpsys_location_comma_locale.txt"))
    assert (fix.latitude, fix.longitude) == (-26.1076, 28.0568)
    assert fix.horizontal_accuracy == 14.5 and fix.altitude == 1753.4 and fix.vertical_accuracy == 4.2


def test_null_last_location_is_no_reading_not_a_crash():
    assert parse_dumpsys_location(recorded("dumpsys_location_null.txt")) == []
    with pytest.raises(NoReading, match="no last known location"):
        best_fix(recorded("dumpsys_location_null.txt"))


def test_legacy_mfield_format():
    fix = best_fix(recorded("dumpsys_location_legacy.txt"))
    assert (fix.provider, fix.latitude, fix.longitude, fix.altitude) == ("gps", 48.856613, 2.352222, 35.0)
    assert fix.horizontal_accuracy == 8.0 and fix.elapsed_realtime_ms == 912345


@pytest.mark.parametrize("text", [recorded("dumpsys_location_malformed.txt"), "", "garbage\x00\xff",
                                  "  last location=Location[gps 1.0,2.0 hAcc=3"])
def test_malformed_location_output_is_a_clear_error(text):
    with pytest.raises(MalformedOutput):
        best_fix(text)


def test_out_of_range_coordinates_rejected():
    with pytest.raises(MalformedOutput, match="out of range"):
        best_fix("Location Manager State:\n  Location Providers:\n    gps provider:\n"
                 "      last location=Location[gps 123.0,13.0 hAcc=3 et=+1s0ms]")


@pytest.mark.parametrize("text,ms", [("+2h17m10s384ms", 8230384), ("+1d2h0m0s0ms", 93600000), ("0", 0),
                                     ("+45s", 45000), ("+1m11s106ms", 71106), ("soon", None), ("+5x", None)])
def test_android_duration(text, ms):
    assert android_duration_ms(text) == ms


def test_battery_aosp():
    b = parse_dumpsys_battery(recorded("dumpsys_battery_aosp.txt"))
    assert b == {
        "percentage": 87.0,
        "charging": True,
        "status": "charging",
        "plugged": "usb",
        "health": "good",
        "temperature_c": 29.3,
        "voltage_mv": 4215,
        "technology": "Li-ion",
        "present": True,
    }


def test_battery_updates_stopped_and_oem_keys():
    b = parse_dumpsys_battery(recorded("dumpsys_battery_updates_stopped.txt"))
    assert b["percentage"] == 15.0 and b["status"] == "discharging" and b["plugged"] == "unplugged"
    assert b["temperature_c"] == 25.1
    assert b["simulated_by_adb"] is True  # values were set by `dumpsys battery set`


def test_battery_samsung_eventlog_tail_is_ignored():
    b = parse_dumpsys_battery(recorded("dumpsys_battery_samsung_eventlog.txt"))
    # the EventLog says level 42 / health 3 / 40.1 °C; the real section says 100 / good / 31.2 °C
    assert b["percentage"] == 100.0 and b["health"] == "good" and b["temperature_c"] == 31.2
    assert b["status"] == "full" and b["plugged"] == "ac" and b["charging"] is True


@pytest.mark.parametrize(
    "text", ["", "Can't find service: battery\n", "Current Battery Service state:\n  level: x\n"]
)
def test_malformed_battery(text):
    with pytest.raises(MalformedOutput):
        parse_dumpsys_battery(text)


def test_sensor_list():
    sensors = parse_sensor_list(recorded("dumpsys_sensorservice.txt"))
    assert [(s.name, s.type) for s in sensors] == [
        ("ICM45631 Accelerometer", "android.sensor.accelerometer"),
        ("AK09918 Magnetometer", "android.sensor.magnetic_field"),
        ("TMD3702 Ambient Light", "android.sensor.light"),
        ("BMP390 Pressure", "android.sensor.pressure"),
        ("Heart Rate", "android.sensor.heart_rate"),
    ]
    assert sensors[0].handle == 0x01010001 and sensors[0].vendor == "Invensense"


def test_recent_events_latest_per_sensor_and_mask_data_skipped():
    events = parse_recent_events(recorded("dumpsys_sensorservice.txt"))
    assert events["ICM45631 Accelerometer"].values == (0.11, 9.79, 0.21)
    assert events["ICM45631 Accelerometer"].ts == 8200.041
    assert events["AK09918 Magnetometer"].values == (-20.0, 0.0, -40.0)
    assert events["TMD3702 Ambient Light"].values == (312.0,)
    assert "Heart Rate" not in events  # mask_data: nothing to read
    assert "BMP390 Pressure" not in events  # nobody listening: no events


def test_no_listener_means_no_event():
    text = recorded("dumpsys_sensorservice_idle.txt")
    assert parse_sensor_list(text)[0].type == "android.sensor.accelerometer"
    assert latest_event_for(text, "android.sensor.accelerometer") is None


# A hostile device's lines may be megabytes (adb's cap is 4 MB of text): a pattern that backtracks over a line
# took time quadratic in it (hours for one such line, on the gateway's event loop). Without backtracking these
# parse in milliseconds; the module's timeout is what would stop the old parsers.
LONG = 1_000_000


@pytest.mark.parametrize("line", [
    "0x1) a" + " " * LONG + "b",  # no '|': the name's lazy match and \s* took turns over the spaces
    "0x1) a" + " " * LONG + "| vendor",
])
def test_a_sensor_line_of_a_megabyte_is_read_in_one_pass(line):
    accel = "0x2) Accel | V | type: android.sensor.accelerometer(1)"
    assert parse_sensor_list(f"Sensor List:\n{line}\n{accel}") == parse_sensor_list(f"Sensor List:\n{accel}")


def test_an_events_line_of_a_megabyte_is_read_in_one_pass():
    text = ("Recent Sensor events:\nAccel Non-wakeup: last 1 events\n" + "\ta" + " " * LONG + "b\n"
            "\t 1 (ts=5.0, wall=19:44:27.248) 0.10, -9.80, 0.20, \n")
    events = parse_recent_events(text)
    assert list(events) == ["Accel"] and events["Accel"].values == (0.10, -9.80, 0.20)


@pytest.mark.parametrize(
    "level",
    ["inf", "-inf", "1e400", "NAN", "Infinity", "1e308", "9" * 5000, "\u0661\u0662", "50.5", "0x32"]
    + ["-5", "101"],  # a level past its scale: a percentage past 100
)
def test_a_battery_level_that_is_no_android_int_is_malformed_output(level):
    # Android prints these fields with %d: int(float("inf")) raised OverflowError, "1e308" overflowed the
    # percentage, and any script's digits were read
    with pytest.raises(MalformedOutput):
        parse_dumpsys_battery(f"Current Battery Service state:\n  level: {level}\n  scale: 100\n")


@pytest.mark.parametrize("value", ["Infinity", "1e400", "NaN", "\u0664\u0663\u0665\u0662", "9" * 5000])
def test_a_battery_int_field_that_is_no_android_int_is_left_out(value):
    for key, field in (("voltage", "voltage_mv"), ("scale", "percentage")):
        text = f"Current Battery Service state:\n  level: 50\n  scale: 100\n  {key}: {value}\n"
        values = parse_dumpsys_battery(text.replace("  scale: 100\n", "", key == "scale"))
        assert values[field] == (None if field == "voltage_mv" else 50.0)


@pytest.mark.parametrize("type_id", ["9" * 5000, "\u0661", "1.5"])
def test_a_sensor_type_id_that_is_no_android_int_skips_the_sensor(type_id):
    # "9" * 5000 raised ValueError (int()'s digit limit) out of the parser; any script's digits were read
    line = f"0x01010001) Accel | Vendor | ver: 1 | type: android.sensor.accelerometer({type_id}) |\n"
    good = "0x01010002) Light | Vendor | ver: 1 | type: android.sensor.light(5) |\n"
    sensors = parse_sensor_list("Sensor List:\n" + line + good)
    assert [(s.name, s.type_id) for s in sensors] == [("Light", 5)]


@pytest.mark.parametrize("ts", ["1.2.3", "..", "\u0662\u0660\u0660.5", "1" * 400 + ".0"])
def test_an_event_whose_timestamp_is_no_number_is_skipped(ts):
    # "1.2.3" matched [\d.]+ and float() raised ValueError out of the parser
    text = (
        "Recent Sensor events:\n"
        "Accel: last 2 events\n"
        "\t 1 (ts=100.001, wall=19:44:27.248) 0.10, -9.80, 0.20, \n"
        f"\t 2 (ts={ts}, wall=19:44:28.248) 5.00, 5.00, 5.00, \n"
    )
    events = parse_recent_events(text)
    assert events["Accel"].ts == 100.001 and events["Accel"].values == (0.1, -9.8, 0.2)


@pytest.mark.parametrize("et", ["+" + "9" * 5000 + "ms", "+\u0661h", "+\u00b2s"])
def test_a_duration_that_is_no_android_duration_is_unread(et):
    # 5,000 digits raised ValueError out of the parser; any script's digits were read
    assert android_duration_ms(et) is None


@pytest.mark.parametrize("nanos", ["9" * 5000, "\u00b2", "\u0661\u0662"])
def test_a_legacy_fix_whose_boot_time_is_no_android_long_has_no_age(nanos):
    # "²".isdigit() is True and int("²") raises; 5,000 digits past int()'s limit raised too
    text = recorded("dumpsys_location_legacy.txt").replace(
        "mElapsedRealtimeNanos=912345000000", f"mElapsedRealtimeNanos={nanos}"
    )
    assert nanos in text
    fix = best_fix(text)
    assert fix.latitude == 48.856613 and fix.elapsed_realtime_ms is None
