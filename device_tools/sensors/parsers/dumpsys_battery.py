"""Parse ``adb shell dumpsys battery`` (AOSP BatteryService.dumpInternal).

Caveats handled (research note §2.1): the ``(UPDATES STOPPED ...)`` line after ``dumpsys battery set``,
OEM keys ("Dock powered", "Capacity level"), and Samsung's EventLog tail with its own ``level:`` lines —
parsing stops at the first blank or unindented line after the header.
"""

from __future__ import annotations

import re
from typing import Any

from device_tools.sensors.errors import MalformedOutput, NoReading
from device_tools.sensors.parsers.numbers import locale_float
from device_tools.sensors.parsers.placeholders import UNKNOWN, flag, is_placeholder

_HEADER = "Current Battery Service state:"
_INT = re.compile(r"-?[0-9]{1,10}")
STATUS = {1: "unknown", 2: "charging", 3: "discharging", 4: "not_charging", 5: "full"}
HEALTH = {
    1: "unknown",
    2: "good",
    3: "overheat",
    4: "dead",
    5: "over_voltage",
    6: "unspecified_failure",
    7: "cold",
}
_POWER_KEYS = {"ac": "AC powered", "usb": "USB powered", "wireless": "Wireless powered",
               "dock": "Dock powered"}


def parse_dumpsys_battery(text: str) -> dict[str, Any]:
    """Battery values named as in the SensorResponse payload (percentage, charging, plugged, ...)."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == _HEADER)
    except StopIteration:
        raise MalformedOutput("dumpsys battery: no 'Current Battery Service state:' header") from None
    raw: dict[str, str] = {}
    updates_stopped = False
    for line in lines[start + 1 :]:
        if not line.strip() or not line[:1].isspace():
            break  # end of the section; what follows (EventLog, ...) is not ours
        if "UPDATES STOPPED" in line:
            updates_stopped = True
            continue
        key, sep, value = line.strip().partition(":")
        if sep:
            raw[key.strip()] = value.strip()
    if is_placeholder(raw.get("level")):
        raise NoReading("dumpsys battery: the device reported no battery level")
    level, scale = _int(raw.get("level")), _int(raw.get("scale")) or 100
    if level is None or scale < 0 or not 0 <= level <= scale:  # as termux's: a percentage from 0 to 100
        raise MalformedOutput("dumpsys battery: no readable 'level' from 0 to its 'scale'")
    printed = {src: raw[key] for src, key in _POWER_KEYS.items() if key in raw}
    plugged = [src for src, value in printed.items() if flag(value)]
    # unplugged only when every source printed says "false": a placeholder says nothing either way
    unplugged = "unplugged" if printed and all(flag(v) is False for v in printed.values()) else UNKNOWN
    status = STATUS.get(_int(raw.get("status")) or 1, "unknown")
    temperature = locale_float(raw.get("temperature", ""))
    values: dict[str, Any] = {
        "percentage": round(level * 100 / scale, 1),
        "charging": None if status == UNKNOWN
        else status == "charging" or (bool(plugged) and status == "full"),
        "status": status,
        "plugged": plugged[0] if plugged else unplugged,
        "health": HEALTH.get(_int(raw.get("health")) or 1, "unknown"),
        "temperature_c": round(temperature / 10, 1) if temperature is not None else None,  # tenths of °C
        "voltage_mv": _int(raw.get("voltage")),
        "technology": None if is_placeholder(raw.get("technology")) else raw.get("technology"),
        "present": flag(raw.get("present")),
    }
    if updates_stopped:
        values["simulated_by_adb"] = True  # someone ran `dumpsys battery set`; values are not real
    return values


def _int(text: str | None) -> int | None:
    """A field Android prints with %d: ASCII digits, an int32's few; anything else is unread (None). Read as a
    float it let "inf" raise OverflowError, "1e308" overflow the percentage, and any script's digits in."""
    t = (text or "").strip()
    return int(t) if _INT.fullmatch(t) else None
