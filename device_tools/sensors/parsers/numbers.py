"""Lenient number parsing for command output printed under any locale ("14,5" means 14.5)."""

from __future__ import annotations

import math
import re

_UNKNOWN = {"", "???", "?", "null", "nan", "NaN"}


def locale_float(text: str) -> float | None:
    """A float from "14.5" or "14,5"; None for the placeholders Android prints for unknown values."""
    t = text.strip()
    if t in _UNKNOWN:
        return None
    if "," in t and "." not in t:
        t = t.replace(",", ".")
    try:
        value = float(t)
    except ValueError:
        return None
    return value if math.isfinite(value) else None  # "inf", "1e999": no reading


# [0-9], not \d (any script's digits, which int() reads), and a long's few: past 4,300 int() raises
_DURATION_PART = re.compile(r"([0-9]{1,19})(d|h|ms|m|s)")
ANDROID_LONG = re.compile(r"-?[0-9]{1,19}")
_DURATION_MS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1_000, "ms": 1}


def android_duration_ms(text: str) -> int | None:
    """Parse TimeUtils.formatDuration output such as "+2h17m10s384ms" (or "0") into milliseconds."""
    t = text.strip().lstrip("+")
    if t in ("0", "0ms"):
        return 0
    pos, total = 0, 0
    for m in _DURATION_PART.finditer(t):
        if m.start() != pos:
            return None
        total += int(m.group(1)) * _DURATION_MS[m.group(2)]
        pos = m.end()
    return total if pos == len(t) and pos > 0 else None
