"""Parse the JSON the termux-api commands print (research note §2.4)."""

from __future__ import annotations

import json
from typing import Any

from device_tools.sensors.errors import MalformedOutput, NoReading, SourceUnavailable


def json_objects(text: str, command: str) -> list[dict[str, Any]]:
    """Every JSON object in the output (termux-sensor prints one per sample, pretty-printed)."""
    decoder, pos, out = json.JSONDecoder(), 0, []
    text = text.strip()
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise MalformedOutput(f"{command}: output is not JSON ({e.msg} at {e.pos})") from None
        if not isinstance(obj, dict):
            raise MalformedOutput(f"{command}: expected a JSON object, got {type(obj).__name__}")
        out.append(obj)
    if not out:
        raise MalformedOutput(f"{command}: empty output")
    for obj in out:
        if "API_ERROR" in obj:
            message = str(obj["API_ERROR"])
            if "Failed to get location" in message:
                raise NoReading(f"{command}: {message}")
            raise SourceUnavailable(f"{command}: Termux:API error: {message}")
    return out


def parse_termux_location(text: str) -> dict[str, Any]:
    obj = json_objects(text, "termux-location")[-1]
    lat, lon = obj.get("latitude"), obj.get("longitude")
    if not isinstance(lat, (int, float)) or not isinstance(lon, (int, float)):
        raise MalformedOutput("termux-location: no numeric latitude/longitude")
    elapsed = obj.get("elapsedMs")  # unlike adb's et=, this IS the fix's age
    return {
        "latitude": float(lat),
        "longitude": float(lon),
        "altitude": _num(obj.get("altitude")),
        "horizontalAccuracy": _num(obj.get("accuracy")),
        "verticalAccuracy": _num(obj.get("vertical_accuracy")),  # only on API 26+
        "speed": _num(obj.get("speed")),
        "bearing": _num(obj.get("bearing")),
        "provider": obj.get("provider"),
        "ageSeconds": round(elapsed / 1000, 3) if isinstance(elapsed, (int, float)) else None,
    }


def parse_termux_battery(text: str) -> dict[str, Any]:
    obj = json_objects(text, "termux-battery-status")[-1]
    pct = obj.get("percentage")
    if not isinstance(pct, (int, float)):
        raise MalformedOutput("termux-battery-status: no numeric 'percentage'")
    status = str(obj.get("status", "UNKNOWN")).lower()
    plugged = str(obj.get("plugged", "UNPLUGGED")).lower().removeprefix("plugged_")
    return {
        "percentage": float(pct),
        "charging": status == "charging",
        "status": status,
        "plugged": plugged,
        "health": str(obj.get("health", "UNKNOWN")).lower(),
        "temperature_c": _num(obj.get("temperature")),
        "voltage_mv": _num(obj.get("voltage")),
        "technology": obj.get("technology"),
        "present": bool(obj.get("present", True)),
    }


def parse_termux_sensor_list(text: str) -> list[str]:
    obj = json_objects(text, "termux-sensor -l")[-1]
    names = obj.get("sensors")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise MalformedOutput("termux-sensor -l: expected {\"sensors\": [names]}")
    return names


def parse_termux_sensor_sample(text: str, name: str) -> list[float]:
    """The values of ``name`` from the last sample that has them (the first sample may be ``{}``)."""
    for obj in reversed(json_objects(text, "termux-sensor")):
        entry = obj.get(name)
        if isinstance(entry, dict) and isinstance(entry.get("values"), list):
            values = entry["values"]
            if not all(isinstance(v, (int, float)) for v in values) or not values:
                raise MalformedOutput(f"termux-sensor: non-numeric values for {name!r}")
            return [float(v) for v in values]
    raise NoReading(f"termux-sensor: no sample of {name!r} in the output")


def parse_termux_wifi_scan(text: str) -> dict[str, Any]:
    """``termux-wifi-scaninfo`` (a JSON array of access points) as nearby devices."""
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        json_objects(text, "termux-wifi-scaninfo")  # raises the API error or MalformedOutput
        raise MalformedOutput("termux-wifi-scaninfo: output is not JSON") from None
    if isinstance(data, dict):
        json_objects(text, "termux-wifi-scaninfo")  # {"API_ERROR": ...}
        raise MalformedOutput("termux-wifi-scaninfo: expected a JSON array")
    if not isinstance(data, list) or not all(isinstance(ap, dict) for ap in data):
        raise MalformedOutput("termux-wifi-scaninfo: expected a JSON array of access points")
    return {"devices": [{"name": ap.get("ssid") or None, "address": ap.get("bssid"), "kind": "wifi",
                         "rssi": _num(ap.get("rssi"))} for ap in data]}


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
