"""Parse ``adb shell dumpsys location`` into location fixes.

Errors name the failure and a position or length, never the text: it may hold the exact fix.

Caveats handled (research note §2.2):
- ``et=`` is elapsed realtime since boot when the fix was made, NOT its age: age = uptime - et.
- Some locales print decimal commas: ``Location[fused -26,107600,28,056800 hAcc=14,5 ...]``.
- ``last location=null`` when a provider has no fix.
- Older Androids print ``Location[mProvider=gps,mLatitude=...,mAccuracy=...]``.
- OEM extras (``{Bundle[{satellites=9}]}``, vendor lines) are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from device_tools.sensors.errors import MalformedOutput, NoReading
from device_tools.sensors.parsers.location_lines import fix_values
from device_tools.sensors.parsers.numbers import ANDROID_LONG, android_duration_ms, locale_float

_KEY = re.compile(r"^(?P<k>[A-Za-z]+)=(?P<v>.*)$")
_PROVIDER_PREFERENCE = ("gps", "fused", "network", "passive")


@dataclass(frozen=True)
class LocationFix:
    provider: str
    latitude: float
    longitude: float
    altitude: float | None = None
    horizontal_accuracy: float | None = None
    vertical_accuracy: float | None = None
    speed: float | None = None
    bearing: float | None = None
    elapsed_realtime_ms: int | None = None  # since boot, at the fix; compare with /proc/uptime

    def age_seconds(self, uptime_seconds: float | None) -> float | None:
        if uptime_seconds is None or self.elapsed_realtime_ms is None:
            return None
        return max(0.0, uptime_seconds - self.elapsed_realtime_ms / 1000.0)


def parse_location_body(body: str) -> LocationFix:
    """Parse what is inside ``Location[...]``."""
    body = re.sub(r"\{.*\}", "", body).strip()  # OEM bundle extras
    if body.startswith("mProvider="):
        return _parse_legacy(body)
    head, _, rest = body.partition(" ")
    provider = head
    coords, _, rest = rest.strip().partition(" ")
    lat, lon = _split_coordinates(coords)
    fields: dict[str, str] = {}
    for token in rest.split():
        m = _KEY.match(token)
        if m:
            fields[m.group("k")] = m.group("v")
    return LocationFix(
        provider=provider,
        latitude=lat,
        longitude=lon,
        altitude=locale_float(fields.get("alt", "")),
        horizontal_accuracy=locale_float(fields.get("hAcc", fields.get("acc", ""))),
        vertical_accuracy=locale_float(fields.get("vAcc", "")),
        speed=locale_float(fields.get("vel", "")),
        bearing=locale_float(fields.get("bear", "")),
        elapsed_realtime_ms=android_duration_ms(fields["et"]) if "et" in fields else None,
    )


def _split_coordinates(text: str) -> tuple[float, float]:
    parts = text.split(",")
    if len(parts) == 2:  # "30.188433,120.199818"
        lat, lon = locale_float(parts[0]), locale_float(parts[1])
    elif len(parts) == 4:  # decimal-comma locale: "-26,107600,28,056800"
        lat, lon = locale_float(f"{parts[0]}.{parts[1]}"), locale_float(f"{parts[2]}.{parts[3]}")
    else:
        raise MalformedOutput(f"dumpsys location: coordinates in {len(parts)} comma parts")
    if lat is None or lon is None or not (-90 <= lat <= 90) or not (-180 <= lon <= 180):
        raise MalformedOutput("dumpsys location: coordinates unreadable or out of range")
    return lat, lon


def _parse_legacy(body: str) -> LocationFix:
    fields = dict(p.split("=", 1) for p in body.split(",") if "=" in p)
    lat, lon = locale_float(fields.get("mLatitude", "")), locale_float(fields.get("mLongitude", ""))
    if lat is None or lon is None:
        raise MalformedOutput(f"dumpsys location: legacy fix without coordinates ({len(body)} chars)")
    nanos = fields.get("mElapsedRealtimeNanos")
    has_alt = fields.get("mHasAltitude", "true") == "true"
    return LocationFix(
        provider=fields.get("mProvider", "unknown"),
        latitude=lat,
        longitude=lon,
        altitude=locale_float(fields.get("mAltitude", "")) if has_alt else None,
        horizontal_accuracy=locale_float(fields.get("mAccuracy", "")),
        speed=locale_float(fields.get("mSpeed", "")),
        bearing=locale_float(fields.get("mBearing", "")),
        # not isdigit(): "²" is a digit to it, and int() refuses it
        elapsed_realtime_ms=int(nanos) // 1_000_000 if nanos and ANDROID_LONG.fullmatch(nanos) else None,
    )


def _location_bodies(line: str) -> list[str]:
    """The text inside each ``Location[...]``, matching nested brackets (``{Bundle[{...}]}``)."""
    bodies, start = [], line.find("Location[")
    while start != -1:
        depth, i = 0, start + len("Location")
        for i in range(start + len("Location"), len(line)):
            depth += {"[": 1, "]": -1}.get(line[i], 0)
            if depth == 0:
                break
        if depth != 0:
            raise MalformedOutput(f"dumpsys location: unterminated Location[ at column {start}")
        bodies.append(line[start + len("Location["):i])
        start = line.find("Location[", i)
    return bodies


def parse_dumpsys_location(text: str) -> list[LocationFix]:
    """Every last-known fix in the dump (``null`` ones skipped). Raises MalformedOutput on garbage.

    Only the system's own lines count, by where they stand (``location_lines``): a ``Location[...]`` anywhere
    else (an app's attribution tag in a registration or history line) is not a fix."""
    if "Location" not in text and "location" not in text:
        raise MalformedOutput("dumpsys location: output does not look like a location dump")
    fixes = []
    for value in fix_values(text):
        if value == "null":
            continue
        bodies = _location_bodies(value)
        if len(bodies) != 1 or not value.startswith("Location[") or not value.endswith("]"):
            raise MalformedOutput(f"dumpsys location: a last location line is not one Location[...] "
                                  f"({len(value)} chars)")
        fixes.append(parse_location_body(bodies[0]))
    return fixes


def best_fix(text: str) -> LocationFix:
    """The freshest fix (largest ``et``), preferring precise providers on ties; NoReading if all are null."""
    fixes = parse_dumpsys_location(text)
    if not fixes:
        raise NoReading("the device has no last known location (every provider reports null)")

    def rank(f: LocationFix) -> tuple[int, int]:
        pref = _PROVIDER_PREFERENCE.index(f.provider) if f.provider in _PROVIDER_PREFERENCE else 9
        return (f.elapsed_realtime_ms if f.elapsed_realtime_ms is not None else -1, -pref)

    return max(fixes, key=rank)


def parse_uptime(text: str) -> float:
    """``/proc/uptime`` -> seconds since boot (first field)."""
    first = text.strip().split()[0] if text.strip() else ""
    value = locale_float(first)
    if value is None:
        raise MalformedOutput(f"/proc/uptime: unexpected content ({len(text)} chars)")
    return value
