"""Which ``termux-sensor`` name serves each kind: one sensor's, by whole words, or none.

``termux-sensor -l`` lists names only (no types), so a name must say what it is. A name fits a kind when its
words (letters and digits, without case) hold one of the kind's words and none of the words Android's other
sensor types are named by (a "Geomagnetic Rotation Vector" is a quaternion, not a compass; an "Accelerometer
Uncalibrated" is not the phone's motion), and it fits that kind alone. A kind is served only when exactly one
sensor fits it, its wake-up and non-wake-up listings counted as one (the non-wake-up one is read): with two,
which is the phone's cannot be told. And the name must be one ``termux-sensor -s`` reads as itself: it splits
its argument on commas, and of the names holding the one asked for (without case) it reads the shortest, so a
name with a comma, or listed twice but for case, serves nothing.
"""

from __future__ import annotations

import re
from collections import Counter

from sentinel_mcp.core.sensor_kinds import SensorKind

KIND_WORDS: dict[SensorKind, frozenset[str]] = {
    SensorKind.motion: frozenset({"accelerometer", "accel"}),
    SensorKind.compass: frozenset({"magnetometer", "magnetic", "mag", "compass"}),
    SensorKind.ambient_light: frozenset({"light", "als", "lux"}),
    SensorKind.barometer: frozenset({"pressure", "barometer", "baro"}),
}
# words of Android's other sensor types (android.sensor.*) and of their uncalibrated or derived forms: a name
# holding one is another sensor's, whatever kind word it holds too
OTHER_TYPES = frozenset({
    "uncalibrated", "uncal", "raw", "linear", "acceleration", "rotation", "vector", "game", "geomagnetic",
    "geomag", "gravity", "orientation", "gyroscope", "gyro", "proximity", "temperature", "humidity", "step",
    "counter", "detector", "detect", "tilt", "gesture", "glance", "pick", "wrist", "significant", "heart",
    "beat", "rate", "pose", "6dof", "stationary", "offbody", "hinge", "angle", "head", "tracker", "heading",
    "limited", "axes", "pedometer", "color", "rgb", "ir", "uv", "flicker", "cct", "sar",
})
_WAKE = frozenset({"wakeup", "wake", "up", "non", "nonwakeup"})


def _words(name: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", name.casefold())


def kind_of(name: str) -> SensorKind | None:
    """The one kind ``name`` says it is (None: none, several, or another sensor type's)."""
    words = set(_words(name)) - _WAKE
    if words & OTHER_TYPES:
        return None
    kinds = [kind for kind, kind_words in KIND_WORDS.items() if words & kind_words]
    return kinds[0] if len(kinds) == 1 else None


def _wakes(name: str) -> bool:
    words = _words(name)
    said = "wakeup" in words or any(a == "wake" and b == "up" for a, b in zip(words, words[1:]))
    return said and "non" not in words and "nonwakeup" not in words


def _sensor(name: str) -> tuple[str, ...]:
    """One sensor's listings share this: its name without its wake-up words."""
    return tuple(w for w in _words(name) if w not in _WAKE)


def names_by_kind(names: list[str]) -> dict[SensorKind, str]:
    """The name to read for each kind ``names`` serves (see the module's text)."""
    folded = Counter(n.casefold() for n in names)
    fits: dict[SensorKind, dict[tuple[str, ...], list[str]]] = {}
    for name in names:
        kind = kind_of(name)
        if kind is not None:
            fits.setdefault(kind, {}).setdefault(_sensor(name), []).append(name)
    found: dict[SensorKind, str] = {}
    for kind, sensors in fits.items():
        if len(sensors) != 1:
            continue  # two sensors of this kind by other names: which is the phone's?
        (listings,) = sensors.values()
        name = min(listings, key=lambda n: (_wakes(n), len(n), n))
        if "," not in name and folded[name.casefold()] == 1:
            found[kind] = name
    return found
