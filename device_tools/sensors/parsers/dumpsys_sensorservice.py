"""Parse ``adb shell dumpsys sensorservice``: the sensor inventory and the most recent event per sensor.

Caveats (research note §2.3): events appear only while some client has the sensor registered, so
adb cannot sample on demand; permission-protected sensors may print ``mask_data``; the format is not
stable across versions, so every line is parsed leniently and unknown lines are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from device_tools.sensors.errors import MalformedOutput

# The device's output is hostile, and a line may be megabytes: no pattern here may backtrack over a line (a
# lazy name before ``\s*\|`` took time quadratic in a line of spaces, hours for one 4 MB line, on the event
# loop). Fields are cut with str.split; the patterns left match their own fixed words.
# 0x01010001) ICM45631 Accelerometer    | Invensense      | ver: 1 | type: android.sensor.accelerometer(1) |
# ...
_SENSOR_HANDLE = re.compile(r"\s*0x(?P<handle>[0-9a-fA-F]+)\)")
# numbers in [0-9], not \d (any script's digits, which int() and float() read), and as many digits as Android
# prints: an int32, a timestamp of seconds since boot with its fraction
_SENSOR_TYPE = re.compile(r"type:\s*(?P<type>[\w.]+)\((?P<type_id>[0-9]{1,10})\)")
# "lsm6dsv Accelerometer Non-wakeup: last 3 events"
_EVENTS_TAIL = re.compile(r":\s*last\s+\d+\s+events")
_WAKE_WORDS = ("Non-wakeup", "Wakeup", "non-wakeup", "wakeup")
# "	 1 (ts=100.001, wall=19:44:27.248) 0.10, -9.80, 0.20, 0.00, "
_EVENT = re.compile(
    r"^\s*[0-9]+\s+\(ts=(?P<ts>[0-9]{1,12}(?:\.[0-9]{1,12})?),\s*wall=(?P<wall>[0-9:.]+)\)\s*(?P<values>.*)$"
)

# Android sensor type strings -> Sentinel sensor kinds
TYPE_TO_KIND = {
    "android.sensor.accelerometer": "motion",
    "android.sensor.magnetic_field": "compass",
    "android.sensor.light": "ambient_light",
    "android.sensor.pressure": "barometer",
}


@dataclass(frozen=True)
class HardwareSensor:
    handle: int
    name: str
    vendor: str
    type: str
    type_id: int


@dataclass(frozen=True)
class SensorEvent:
    sensor_name: str
    ts: float  # seconds since boot
    values: tuple[float, ...]


def parse_sensor_list(text: str) -> list[HardwareSensor]:
    if "Sensor List" not in text and "sensor" not in text.lower():
        raise MalformedOutput("dumpsys sensorservice: output does not look like a sensor service dump")
    sensors = []
    for line in text.splitlines():
        m = _SENSOR_HANDLE.match(line)
        fields = line[m.end():].split("|", 2) if m else []
        kind = _SENSOR_TYPE.search(fields[2]) if len(fields) == 3 and fields[0].strip() else None
        if m and kind:
            sensors.append(
                HardwareSensor(
                    int(m.group("handle"), 16),
                    fields[0].strip(),
                    fields[1].strip(),
                    kind.group("type"),
                    int(kind.group("type_id")),
                )
            )
    return sensors


def _events_header(line: str) -> str | None:
    """The sensor name of a "<name>[ Non-wakeup]: last N events" line (None: not one)."""
    tail = _EVENTS_TAIL.search(line)
    if tail is None:
        return None
    return _event_name(line[: tail.start()])


def _event_name(name: str) -> str | None:
    """A sensor's name as its events are headed: without a trailing wake-up word."""
    for word in _WAKE_WORDS:
        before = name[: -len(word)]
        if name.endswith(word) and before != before.rstrip():
            name = before
            break
    return name.strip() or None


def parse_recent_events(text: str) -> dict[str, SensorEvent]:
    """The latest event per sensor name from the ``Recent Sensor events:`` section."""
    latest: dict[str, SensorEvent] = {}
    in_section, current = False, None
    for line in text.splitlines():
        if line.startswith("Recent Sensor events"):
            in_section = True
            continue
        if not in_section:
            continue
        header = _events_header(line.strip())
        if header:
            current = header
            continue
        event = _EVENT.match(line)
        if event and current:
            values = _values(event.group("values"))
            if values is None:
                continue  # mask_data or unreadable: skip rather than guess
            ev = SensorEvent(current, float(event.group("ts")), values)
            if current not in latest or ev.ts >= latest[current].ts:
                latest[current] = ev
        elif line.strip() and not line[:1].isspace():
            in_section, current = False, None  # the next unindented section ends the events
    return latest


def _values(text: str) -> tuple[float, ...] | None:
    if "mask" in text:
        return None
    out = []
    for part in text.replace(";", ",").split(","):
        p = part.strip()
        if not p:
            continue
        try:
            out.append(float(p))
        except ValueError:
            return None
    return tuple(out) or None


def latest_event_for(text: str, android_type: str) -> tuple[HardwareSensor, SensorEvent] | None:
    """The newest event of any sensor of this Android type (e.g. android.sensor.accelerometer). Events are
    headed by a sensor's name alone: a name that sensors of another type share too (chip-named sensors, an
    accelerometer and a gyroscope both "lsm6ds3") heads events that may be the other's, so it serves none."""
    listed = parse_sensor_list(text)
    types: dict[str | None, set[str]] = {}
    for s in listed:
        types.setdefault(_event_name(s.name), set()).add(s.type)
    sensors = [s for s in listed if s.type == android_type and types[_event_name(s.name)] == {android_type}]
    events = parse_recent_events(text)
    best: tuple[HardwareSensor, SensorEvent] | None = None
    for s in sensors:
        ev = events.get(_event_name(s.name) or "")
        if ev and (best is None or ev.ts > best[1].ts):
            best = (s, ev)
    return best
