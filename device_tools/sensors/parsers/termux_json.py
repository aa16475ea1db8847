"""Parse the JSON the termux-api commands print (research note §2.4).

Numbers must be finite, names short strings; errors never quote the output (it may hold the reading)."""

from __future__ import annotations

import json
import math
from typing import Any

from device_tools.sensors.errors import MalformedOutput, NoReading, SourceUnavailable
from device_tools.sensors.parsers.placeholders import UNKNOWN, flag, is_placeholder, state

MAX_TEXT = 256  # a provider, technology, sensor or access point name
# the states BatteryStatusAPI.java prints (research note §2.4); PLUGGED_<n> is a source it has no name for
STATUS = {s: s.lower() for s in ("CHARGING", "DISCHARGING", "FULL", "NOT_CHARGING", "UNKNOWN")}
HEALTH = {h: h.lower() for h in ("GOOD", "OVERHEAT", "DEAD", "OVER_VOLTAGE", "UNSPECIFIED_FAILURE", "COLD",
                                 "UNKNOWN")}
PLUGGED = {"UNPLUGGED": "unplugged", "PLUGGED_AC": "ac", "PLUGGED_USB": "usb", "PLUGGED_WIRELESS": "wireless",
           "PLUGGED_DOCK": "dock", **{f"PLUGGED_{n}": str(n) for n in range(1, 65)}}
# what Python's decoder refuses with other errors than JSONDecodeError (RecursionError, ValueError)
_TOO_DEEP_OR_LONG = "nested too deep or a number too long"


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
        except (RecursionError, ValueError):  # nested past the decoder's depth, an int past 4,300 digits
            raise MalformedOutput(f"{command}: output is not JSON ({_TOO_DEEP_OR_LONG})") from None
        if not isinstance(obj, dict):
            raise MalformedOutput(f"{command}: expected a JSON object, got {type(obj).__name__}")
        out.append(obj)
    if not out:
        raise MalformedOutput(f"{command}: empty output")
    for obj in out:
        if "API_ERROR" in obj:
            message = obj["API_ERROR"]  # its text is the device's: only its kind and length are reported
            size = len(message) if isinstance(message, str) else 0
            if isinstance(message, str) and "Failed to get location" in message:
                raise NoReading(f"{command}: the device has no location fix ({size} chars)")
            raise SourceUnavailable(f"{command}: Termux:API error ({size} chars)")
    return out


def parse_termux_location(text: str) -> dict[str, Any]:
    obj = json_objects(text, "termux-location")[-1]
    raw = (obj.get("latitude"), obj.get("longitude"))
    lat, lon = (_num(v) for v in raw)
    if any(v is None and not is_placeholder(r) for v, r in zip((lat, lon), raw)):  # said, but not a number
        raise MalformedOutput("termux-location: no finite numeric latitude/longitude")
    if lat is None or lon is None:  # left out or a placeholder: the phone has no fix
        raise NoReading("termux-location: no location fix (no coordinates)")
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        raise MalformedOutput("termux-location: latitude/longitude out of range")
    elapsed = _num(obj.get("elapsedMs"))  # unlike adb's et=, this IS the fix's age
    return {
        "latitude": lat,
        "longitude": lon,
        "altitude": _num(obj.get("altitude")),
        "horizontalAccuracy": _num(obj.get("accuracy")),
        "verticalAccuracy": _num(obj.get("vertical_accuracy")),  # only on API 26+
        "speed": _num(obj.get("speed")),
        "bearing": _num(obj.get("bearing")),
        "provider": _text(obj.get("provider")),
        "ageSeconds": round(elapsed / 1000, 3) if elapsed is not None else None,
    }


def parse_termux_battery(text: str) -> dict[str, Any]:
    obj = json_objects(text, "termux-battery-status")[-1]
    if is_placeholder(obj.get("percentage")):
        raise NoReading("termux-battery-status: the device reported no battery level")
    pct = _num(obj.get("percentage"))
    if pct is None or not 0 <= pct <= 100:
        raise MalformedOutput("termux-battery-status: no 'percentage' from 0 to 100")
    status = state(obj.get("status"), STATUS)
    return {
        "percentage": pct,
        "charging": None if status == UNKNOWN else status == "charging",
        "status": status,
        "plugged": state(obj.get("plugged"), PLUGGED),
        "health": state(obj.get("health"), HEALTH),
        "temperature_c": _num(obj.get("temperature")),
        "voltage_mv": _num(obj.get("voltage")),
        "technology": _text(obj.get("technology")),
        "present": flag(obj.get("present")),
    }


def parse_termux_sensor_list(text: str) -> list[str]:
    obj = json_objects(text, "termux-sensor -l")[-1]
    names = obj.get("sensors")
    if not isinstance(names, list) or not all(isinstance(n, str) and 0 < len(n) <= MAX_TEXT for n in names):
        raise MalformedOutput("termux-sensor -l: expected {\"sensors\": [names]}")
    return names


def parse_termux_sensor_sample(text: str, name: str) -> list[float]:
    """The values of ``name`` from the last sample that has them (the first sample may be ``{}``)."""
    for obj in reversed(json_objects(text, "termux-sensor")):
        entry = obj.get(name)
        if isinstance(entry, dict) and isinstance(entry.get("values"), list):
            values = entry["values"]
            numbers = [_num(v) for v in values]
            if not numbers or len(numbers) > 64 or any(v is None for v in numbers):
                raise MalformedOutput(f"termux-sensor: {len(values)} values, not all finite numbers")
            return [v for v in numbers if v is not None]
    raise NoReading("termux-sensor: no sample of the sensor in the output")


def parse_termux_wifi_scan(text: str) -> dict[str, Any]:
    """``termux-wifi-scaninfo`` (a JSON array of access points) as nearby devices."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        json_objects(text, "termux-wifi-scaninfo")  # raises the API error or MalformedOutput
        raise MalformedOutput("termux-wifi-scaninfo: output is not JSON") from None
    except (RecursionError, ValueError):  # nested past the decoder's depth, an int past 4,300 digits
        raise MalformedOutput(f"termux-wifi-scaninfo: output is not JSON ({_TOO_DEEP_OR_LONG})") from None
    if isinstance(data, dict):
        json_objects(text, "termux-wifi-scaninfo")  # {"API_ERROR": ...}
        raise MalformedOutput("termux-wifi-scaninfo: expected a JSON array")
    if not isinstance(data, list) or not all(isinstance(ap, dict) for ap in data):
        raise MalformedOutput("termux-wifi-scaninfo: expected a JSON array of access points")
    return {"devices": [{"name": _text(ap.get("ssid")) or None, "address": _text(ap.get("bssid")),
                         "kind": "wifi", "rssi": _num(ap.get("rssi"))} for ap in data]}


def _num(v: Any) -> float | None:
    """A finite float, else None: JSON's NaN, Infinity and 1e400 are not readings."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except OverflowError:  # a 400-digit integer
        return None
    return f if math.isfinite(f) else None


def _text(v: Any) -> str | None:
    """A short string, else None: a name never arrives as an object, a number, a megabyte or a placeholder."""
    return v if isinstance(v, str) and len(v) <= MAX_TEXT and not is_placeholder(v) else None
