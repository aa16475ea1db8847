"""When a location fix was made, as its reading says, and the time shown for it at each scope.

A source reads the phone's last fix, which may be minutes or hours old: termux-location prints its age
(``elapsedMs``), dumpsys its boot-relative time (``et=``, less ``/proc/uptime``). The answer's timestamp is
the fix's, never the read's, so an old position is never shown as the phone's position now. Below ``detailed``
the time is cut down as the place is (minimal: to 10 minutes, standard: to the minute), always toward the
past: a fix never looks fresher than it is. A fix whose age is unknown could be of any age and is not served;
an age no phone prints (below zero, a fix from the future; before 1970; not a number) is malformed output.
"""

from __future__ import annotations

import math
from typing import Any

from device_tools.sensors.errors import MalformedOutput, NoReading
from sentinel_mcp.core.sensor_kinds import Scope

DEFAULT_MAX_AGE = 120  # seconds: without a max_age of the requester's, an older fix is said to be old
TIME_CUT = {Scope.minimal: 600, Scope.standard: 60, Scope.detailed: 1}  # seconds the shown time is cut to


def fix_time(values: dict[str, Any], taken_at: float) -> float:
    """The epoch time of the fix in a location reading read at ``taken_at``."""
    age = values.get("ageSeconds")
    if age is None:
        raise NoReading("the location fix's age is unknown, so it may be of any age")
    if isinstance(age, bool) or not isinstance(age, (int, float)) or not math.isfinite(age):
        raise MalformedOutput("the location fix's age is not a number")
    if not 0 <= age <= taken_at:
        raise MalformedOutput("the location fix's age is below zero or before 1970")
    return taken_at - age


def shown_time(scope: Scope, fix_at: float) -> float:
    """The fix's time as ``scope`` shows it: cut down (never up) to the scope's step."""
    step = TIME_CUT[scope]
    return math.floor(fix_at / step) * step



def youngest_age(scope: Scope, taken_at: float, fix_at: float) -> float:
    """How old a fix made at ``fix_at`` and read at ``taken_at`` is at least, as far as its time shown at
    ``scope`` tells (``detailed`` shows it whole: its exact age). A requester's max_age and the stale flag
    judge this, so they tell nothing finer than the shown time does: a fresh fix is never said to be old, and
    one older than asked by less than the scope's step may be served, its time shown."""
    if scope is Scope.detailed:
        return taken_at - fix_at
    return taken_at - shown_time(scope, fix_at) - TIME_CUT[scope]
