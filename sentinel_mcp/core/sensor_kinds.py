"""The sensors Sentinel brokers, their scope levels and maximum rates (the design's "Sensor Types &
Policies")."""

from __future__ import annotations

from enum import Enum


class SensorKind(str, Enum):
    location = "location"
    battery = "battery"
    motion = "motion"  # accelerometer
    compass = "compass"
    ambient_light = "ambient_light"
    barometer = "barometer"
    nearby_devices = "nearby_devices"
    camera = "camera"  # through termux-api (termux-camera-photo) where present
    microphone = "microphone"


class Scope(str, Enum):
    minimal = "minimal"
    standard = "standard"
    detailed = "detailed"

    @property
    def level(self) -> int:
        return _SCOPE_LEVEL[self]

    def covers(self, other: Scope) -> bool:
        """A grant at this scope allows a request at ``other`` (same or coarser)."""
        return self.level >= other.level


# sensors whose payload depends on the scope; for the others (design: "N/A") the scope changes nothing
SCOPED_SENSORS = frozenset({"location", "battery", "nearby_devices"})

_SCOPE_LEVEL = {Scope.minimal: 0, Scope.standard: 1, Scope.detailed: 2}

# Max samples per second per sensor (design table). Battery is not in the table; 1 Hz is plenty for it.
MAX_RATE_HZ: dict[SensorKind, float] = {
    SensorKind.location: 1.0,
    SensorKind.camera: 60.0,
    SensorKind.microphone: 60.0,
    SensorKind.motion: 100.0,
    SensorKind.nearby_devices: 10.0,
    SensorKind.compass: 10.0,
    SensorKind.ambient_light: 10.0,
    SensorKind.barometer: 10.0,
    SensorKind.battery: 1.0,
}

DESCRIPTIONS: dict[SensorKind, str] = {
    SensorKind.location: "position fix (scope: minimal=city, standard=street, detailed=GPS)",
    SensorKind.battery: "charge level and state (scope: minimal=level, standard=+charging, "
        "detailed=+health/temp/voltage)",
    SensorKind.motion: "accelerometer x/y/z in m/s^2",
    SensorKind.compass: "heading in degrees from magnetic north",
    SensorKind.ambient_light: "illuminance in lux",
    SensorKind.barometer: "air pressure in hPa",
    SensorKind.nearby_devices: "nearby radios (scope: minimal=count, standard=+kinds/signal, "
        "detailed=+names/addresses)",
    SensorKind.camera: "one photo from the back camera (JPEG, at most 640 px, no EXIF; Termux only)",
    SensorKind.microphone: "a 3-second recording (AAC in MP4; Termux only)",
}


def parse_sensor(name: str) -> SensorKind:
    try:
        return SensorKind(name)
    except ValueError:
        known = ", ".join(k.value for k in SensorKind)
        raise ValueError(f"unknown sensor {name!r}; known sensors: {known}") from None


def parse_scope(name: str) -> Scope:
    try:
        return Scope(name)
    except ValueError:
        raise ValueError(f"unknown scope {name!r}; use minimal, standard or detailed") from None
