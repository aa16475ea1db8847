"""The one interface every sensor source implements (simulated, adb, Termux)."""

from __future__ import annotations

from typing import Protocol

from sentinel_mcp.core.sensor_kinds import SensorKind
from device_tools.sensors.reading import Reading


class SensorSource(Protocol):
    name: str

    async def available(self) -> set[SensorKind]:
        """The sensors this device offers through this source (raises SourceUnavailable if unreachable)."""
        ...

    async def read(self, sensor: SensorKind) -> Reading:
        """One full-precision reading; raises a SensorError subclass on failure."""
        ...

    async def close(self) -> None: ...
