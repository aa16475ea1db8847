"""The shape every reading must have before it is scoped, returned or kept, whatever the source printed.

Plain JSON values only: finite numbers, short strings (the media's base64 is bounded by the source's byte
caps), shallow nesting and short lists; latitude and longitude within range. A reading that breaks any of
these is malformed output: nothing of it leaves.
"""

from __future__ import annotations

import math
from typing import Any

from device_tools.sensors.errors import MalformedOutput

MAX_TEXT = 256  # a provider, a hardware or an SSID name
MAX_ITEMS = 500  # access points in range
MAX_DEPTH = 4
MAX_INT = 2**53  # what every JSON client reads exactly
_RANGES = {"latitude": 90.0, "longitude": 180.0}


def check_reading(values: dict[str, Any]) -> None:
    """Raise MalformedOutput (position only, never the value) unless ``values`` has a reading's shape."""
    _check(values, "reading", 0)


def _check(value: Any, where: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise MalformedOutput(f"reading nested too deep at {where}")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if abs(value) > MAX_INT:
            raise MalformedOutput(f"integer out of range at {where}")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise MalformedOutput(f"non-finite number at {where}")
    elif isinstance(value, str):
        if len(value) > MAX_TEXT and not where.endswith("_base64"):
            raise MalformedOutput(f"text of {len(value)} characters at {where}")
    elif isinstance(value, list):
        if len(value) > MAX_ITEMS:
            raise MalformedOutput(f"{len(value)} items at {where}")
        for i, item in enumerate(value):
            _check(item, f"{where}[{i}]", depth + 1)
    elif isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            raise MalformedOutput(f"{len(value)} fields at {where}")
        for key, item in value.items():
            if not isinstance(key, str) or len(key) > MAX_TEXT:
                raise MalformedOutput(f"a field name of a wrong type or length at {where}")
            _check(item, f"{where}.{key}" if len(key) <= 64 else where, depth + 1)
            limit = _RANGES.get(key)
            if limit is not None and (not isinstance(item, (int, float)) or isinstance(item, bool)
                                      or not -limit <= item <= limit):
                raise MalformedOutput(f"{key} out of range at {where}")
    else:
        raise MalformedOutput(f"a value of type {type(value).__name__} at {where}")
