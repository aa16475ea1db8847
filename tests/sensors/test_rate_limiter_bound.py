"""The sensors' rate limiter keeps an entry per (sensor, requester); one whose time has passed reads as
absent, so it is dropped once the table is large: a requester per caller name kept every one for good."""

from __future__ import annotations

import pytest

from device_tools.sensors.errors import Throttled
from device_tools.sensors.rate_limiter import PRUNE_AT, RateLimiter
from sentinel_mcp.core.sensor_kinds import MAX_RATE_HZ, SensorKind


def test_passed_entries_are_dropped_and_limits_still_hold() -> None:
    now = [0.0]
    limiter = RateLimiter(lambda: now[0])
    gap = 1.0 / MAX_RATE_HZ[SensorKind.battery]
    for n in range(3 * PRUNE_AT):
        now[0] += gap  # every read allowed: one more requester each time
        limiter.acquire(SensorKind.battery, f"agent-{n}", MAX_RATE_HZ[SensorKind.battery])
    assert len(limiter._next) <= PRUNE_AT + 1
    # the requester just served is still limited, and so is the sensor as a whole
    last = f"agent-{3 * PRUNE_AT - 1}"
    with pytest.raises(Throttled):
        limiter.acquire(SensorKind.battery, last, MAX_RATE_HZ[SensorKind.battery])
    with pytest.raises(Throttled):
        limiter.acquire(SensorKind.battery, "someone-new", MAX_RATE_HZ[SensorKind.battery])
