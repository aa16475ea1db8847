"""Sensors read over adb: ``dumpsys location``, ``dumpsys battery`` and ``dumpsys sensorservice``.

Every read goes through ``device_tools.gate.CommandGate`` (the one way to the device, as for the screen
tools): this source holds a gate, never an adb client, so it can only send the read-only commands the gate
lets through, and a refused command sends nothing."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from device_tools.adb_backend import AdbBackend
from device_tools.commands import BATTERY, LOCATION, SENSOR_READS, SENSOR_SERVICE, UPTIME
from device_tools.errors import CommandRefused, DeviceUnavailable
from device_tools.gate import CommandGate, ReadOnlyGate
from device_tools.sensors.errors import (
    MalformedOutput,
    NoReading,
    ReadRefused,
    SensorError,
    SensorUnsupported,
    SourceUnavailable,
)
from sentinel_mcp.core.sensor_kinds import SensorKind
from device_tools.sensors.parsers.dumpsys_battery import parse_dumpsys_battery
from device_tools.sensors.parsers.dumpsys_location import best_fix, parse_uptime
from device_tools.sensors.parsers.dumpsys_sensorservice import (
    TYPE_TO_KIND,
    latest_event_for,
    parse_sensor_list,
)
from device_tools.sensors.read_slots import ReadSlots
from device_tools.sensors.reading import Reading

KIND_TO_TYPE = {kind: android for android, kind in TYPE_TO_KIND.items()}


class AdbSource:
    def __init__(self, host: str = "127.0.0.1", port: int = 5037, serial: str | None = None,
                 timeout: float = 10.0, clock: Callable[[], float] = time.time, *,
                 gate: CommandGate | ReadOnlyGate | None = None) -> None:
        """``gate``: the phone's gate when the device built-in shares it; otherwise a gate of its own over
        an adb backend for ``serial`` at ``host:port``. Only a read-only view of it that sends the sensor
        reads
        alone is kept: nothing here can change the phone or read its screen, whatever gate it was given."""
        if gate is None:
            gate = CommandGate(AdbBackend(serial, host, port, serial_setting="sentinel.sensors.serial"))
        # only the four sensor reads: not the screen, not content queries, though the gate calls them
        # read-only
        self._gate = gate.read_only(SENSOR_READS) if isinstance(gate, CommandGate) else gate
        self._timeout, self._clock = timeout, clock
        self.name = f"adb:{serial or 'auto'}"
        self._reads = ReadSlots("adb")

    async def close(self) -> None:
        return None

    async def _run(self, argv: Sequence[str]) -> str:
        try:
            out = await self._gate.read(argv, timeout=self._timeout)
        except CommandRefused as e:
            raise ReadRefused(f"the device gate refused {' '.join(map(str, argv))[:200]!r}: {e}") from None
        except DeviceUnavailable as e:
            raise SourceUnavailable(f"adb: {e}") from None
        if self._gate.serial:
            self.name = f"adb:{self._gate.serial}"
        first = out.strip().splitlines()[0] if out.strip() else ""
        if (
            "Can't find service" in first
            or first.endswith(": not found")
            or "unknown" in first
            and "sh:" in first
        ):
            raise SourceUnavailable(f"adb shell {' '.join(argv)!r}: the service or command is missing")
        return out

    async def available(self) -> set[SensorKind]:
        kinds = {SensorKind.location, SensorKind.battery}
        try:
            listing = parse_sensor_list(await self._run(SENSOR_SERVICE))
        except MalformedOutput:
            listing = []
        kinds |= {SensorKind(TYPE_TO_KIND[s.type]) for s in listing if s.type in TYPE_TO_KIND}
        return kinds

    async def read(self, sensor: SensorKind) -> Reading:
        async with self._reads.hold():
            return await self._read(sensor)

    async def _read(self, sensor: SensorKind) -> Reading:
        if sensor is SensorKind.location:
            values = await self._location()
        elif sensor is SensorKind.battery:
            values = parse_dumpsys_battery(await self._run(BATTERY))
        elif sensor in KIND_TO_TYPE:
            values = await self._hardware(sensor)
        else:
            raise SensorUnsupported(f"{sensor.value} cannot be read over adb")
        return Reading(sensor=sensor, values=values, taken_at=self._clock(), source=self.name)

    async def _location(self) -> dict[str, Any]:
        fix = best_fix(await self._run(LOCATION))
        try:
            uptime = parse_uptime(await self._run(UPTIME))
        except SensorError:
            uptime = None  # its age unknown: the bridge serves no such fix (fix_time.py)
        return {
            "latitude": fix.latitude,
            "longitude": fix.longitude,
            "altitude": fix.altitude,
            "horizontalAccuracy": fix.horizontal_accuracy,
            "verticalAccuracy": fix.vertical_accuracy,
            "speed": fix.speed,
            "bearing": fix.bearing,
            "provider": fix.provider,
            "ageSeconds": _round(fix.age_seconds(uptime)),
        }

    async def _hardware(self, sensor: SensorKind) -> dict[str, Any]:
        text = await self._run(SENSOR_SERVICE)
        android_type = KIND_TO_TYPE[sensor]
        if not any(s.type == android_type for s in parse_sensor_list(text)):
            raise SensorUnsupported(f"this device has no {android_type} sensor")
        found = latest_event_for(text, android_type)
        if found is None:
            # dumpsys only shows events while an app listens; adb cannot sample on demand
            raise NoReading(
                f"no recent {android_type} events: no app is listening to it right now, "
                "and adb cannot sample a sensor on demand (use the Termux source)"
            )
        hw, ev = found
        return values_from_event(sensor, ev.values) | {"hardware": hw.name}


def values_from_event(sensor: SensorKind, v: tuple[float, ...] | list[float]) -> dict[str, Any]:
    """Name the raw values of an Android sensor event."""
    need = 3 if sensor in (SensorKind.motion, SensorKind.compass) else 1
    if len(v) < need:
        raise MalformedOutput(f"{sensor.value}: expected {need} values, got {len(v)}")
    if sensor is SensorKind.motion:
        return {"x": v[0], "y": v[1], "z": v[2], "unit": "m/s^2"}
    if sensor is SensorKind.compass:
        # flat-device approximation from the magnetic field (µT): 0 = north, 90 = east
        return {"heading": round(math.degrees(math.atan2(-v[0], v[1])) % 360, 1), "unit": "degrees"}
    if sensor is SensorKind.ambient_light:
        return {"lux": v[0]}
    return {"pressure_hpa": v[0]}


def _round(x: float | None) -> float | None:
    return round(x, 3) if x is not None else None
