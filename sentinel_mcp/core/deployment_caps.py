"""A deployment's own bounds: each named bound has a default, and ``SENTINEL_CAP_<NAME>`` lowers or raises it
(a positive integer; anything else keeps the default, so a typo never lifts a bound to nothing)."""

from __future__ import annotations

import os


def cap(name: str, default: int) -> int:
    """A bound, lowered (or raised) for a deployment with ``SENTINEL_CAP_<NAME>``; anything but a positive
    integer there keeps ``default``."""
    raw = os.environ.get(f"SENTINEL_CAP_{name}")
    try:
        value = int(raw) if raw is not None else default
    except ValueError:
        value = default
    return value if value > 0 else default
