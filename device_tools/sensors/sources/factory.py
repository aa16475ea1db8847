"""Build the configured source."""

from __future__ import annotations

import time
from collections.abc import Callable

from device_tools.sensors.settings import SensorSettings
from device_tools.sensors.sources.adb import AdbSource
from device_tools.sensors.sources.base import SensorSource
from device_tools.sensors.sources.simulated import SimulatedSource
from device_tools.sensors.sources.termux import TermuxSource


def make_source(settings: SensorSettings, clock: Callable[[], float] = time.time) -> SensorSource:
    if settings.source == "adb":
        return AdbSource(settings.adb_host, settings.adb_port, settings.serial, settings.command_timeout, clock)
    if settings.source == "termux":
        return TermuxSource(settings.termux_bin_dir, settings.command_timeout, clock)
    return SimulatedSource(clock)
