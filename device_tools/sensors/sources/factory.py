"""Build the configured source."""

from __future__ import annotations

import time
from collections.abc import Callable

from sentinel_mcp.core.shared_devices import SharedDevices

from device_tools.adb_backend import AdbBackend
from device_tools.gate import shared_adb_gate
from device_tools.sensors.settings import SensorSettings
from device_tools.sensors.sources.adb import AdbSource
from device_tools.sensors.sources.base import SensorSource
from device_tools.sensors.sources.simulated import SimulatedSource
from device_tools.sensors.sources.termux import TermuxSource


def make_source(settings: SensorSettings, clock: Callable[[], float] = time.time,
                devices: SharedDevices | None = None) -> SensorSource:
    """``devices``: the gateway's shared phones, so an adb source reads through the same gate as the device
    built-in on that phone (one record, one rule set); None (run alone): a gate of its own."""
    if settings.source == "adb":
        gate = shared_adb_gate(devices, settings.adb_host, settings.adb_port, settings.serial,
                               lambda: AdbBackend(settings.serial, settings.adb_host, settings.adb_port,
                                                  serial_setting="sentinel.sensors.serial"))
        return AdbSource(
            settings.adb_host, settings.adb_port, settings.serial, settings.command_timeout, clock, gate=gate
        )
    if settings.source == "termux":
        return TermuxSource(settings.termux_bin_dir, settings.command_timeout, clock)
    return SimulatedSource(clock)
