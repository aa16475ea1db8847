"""Per-sensor rate limits: each sensor at its design maximum overall, and each requester at the rate it
declared (never above that maximum). A throttled request learns when to retry."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from device_tools.sensors.errors import Throttled
from sentinel_mcp.core.sensor_kinds import MAX_RATE_HZ, SensorKind


PRUNE_AT = 4096  # entries; one whose time has passed says nothing (it reads as absent) and is dropped
# the longest a declared rate holds its requester back between reads: every client of a principal shares its
# limit, so a tiny rate (1e-320 Hz: "retry after inf s") would lock all of them out of the sensor for good
MAX_WAIT_SECONDS = 60.0


class RateLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._next: dict[tuple[str, str], float] = {}  # (sensor, requester or "") -> earliest next read
        self._lock = threading.Lock()

    def acquire(self, sensor: SensorKind, requester: str, rate: float) -> None:
        """Take one slot or raise Throttled(retry_after). A throttled call consumes nothing."""
        now = self._clock()
        device_key, own_key = (sensor.value, ""), (sensor.value, requester)
        with self._lock:
            wait = max(self._next.get(device_key, now), self._next.get(own_key, now)) - now
            if wait > 0:
                raise Throttled(f"{sensor.value} is limited to {MAX_RATE_HZ[sensor]:g} Hz "
                                f"(this requester: {rate:g} Hz); retry after {wait:.3f} s", retry_after=wait)
            self._next[device_key] = now + 1.0 / MAX_RATE_HZ[sensor]
            self._next[own_key] = now + min(1.0 / rate, MAX_WAIT_SECONDS)
            if len(self._next) > PRUNE_AT:  # a requester per caller name: the table kept every one for good
                self._next = {k: t for k, t in self._next.items() if t > now}
