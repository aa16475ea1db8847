"""Sensors read over adb (host side, through adbutils and an adb server): ``dumpsys location``,
``dumpsys battery`` and ``dumpsys sensorservice``."""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from device_tools.sensors.errors import (
    MalformedOutput,
    NoReading,
    SensorError,
    SensorUnsupported,
    SourceUnavailable,
)
from device_tools.sensors.kinds import SensorKind
from device_tools.sensors.parsers.dumpsys_battery import parse_dumpsys_battery
from device_tools.sensors.parsers.dumpsys_location import best_fix, parse_uptime
from device_tools.sensors.parsers.dumpsys_sensorservice import (
    TYPE_TO_KIND,
    latest_event_for,
    parse_sensor_list,
)
from device_tools.sensors.reading import Reading

KIND_TO_TYPE = {kind: android for android, kind in TYPE_TO_KIND.items()}


class AdbSource:
    def __init__(self, host: str = "127.0.0.1", port: int = 5037, serial: str | None = None,
                 timeout: float = 10.0, clock: Callable[[], float] = time.time) -> None:
        self._host, self._port, self._serial, self._timeout, self._clock = host, port, serial, timeout, clock
        self._device: Any = None
        self.name = f"adb:{serial or 'auto'}"

    async def close(self) -> None:
        self._device = None

    def _probe_server(self) -> None:
        # adbutils spawns `adb start-server` on port 5037 when it cannot connect; we never want that
        # side effect from a sensor read, so check the server is there first.
        try:
            with socket.create_connection((self._host, self._port), timeout=3):
                pass
        except OSError as e:
            raise SourceUnavailable(f"no adb server at {self._host}:{self._port} ({e.strerror or e}); "
                                    "start it with `adb start-server` and connect the phone") from None

    def _connect(self) -> Any:
        import adbutils

        self._probe_server()
        try:
            client = adbutils.AdbClient(host=self._host, port=self._port, socket_timeout=self._timeout)
            devices = [d for d in client.device_list()]
        except adbutils.AdbError as e:
            raise SourceUnavailable(f"adb server at {self._host}:{self._port}: {e}") from None
        if not devices:
            raise SourceUnavailable("adb: no device connected (check `adb devices`)")
        if self._serial is None:
            if len(devices) > 1:
                serials = ", ".join(d.serial for d in devices)
                raise SourceUnavailable(f"adb: several devices ({serials}); set sentinel.sensors.serial")
            return devices[0]
        for d in devices:
            if d.serial == self._serial:
                return d
        raise SourceUnavailable(f"adb: device {self._serial!r} is not connected")

    def _shell(self, command: str) -> str:
        import adbutils

        if self._device is None:
            self._device = self._connect()
            self.name = f"adb:{self._device.serial}"
        try:
            out = self._device.shell(command, timeout=self._timeout)
        except adbutils.AdbError as e:
            self._device = None  # reconnect next time
            raise SourceUnavailable(f"adb shell {command!r} failed: {e}") from None
        if not isinstance(out, str):
            out = out.decode("utf-8", "replace")
        first = out.strip().splitlines()[0] if out.strip() else ""
        if "Can't find service" in first or first.endswith(": not found") or "unknown" in first and "sh:" in first:
            raise SourceUnavailable(f"adb shell {command!r}: {first}")
        return out

    async def _run(self, command: str) -> str:
        return await anyio.to_thread.run_sync(self._shell, command)

    async def available(self) -> set[SensorKind]:
        kinds = {SensorKind.location, SensorKind.battery}
        try:
            listing = parse_sensor_list(await self._run("dumpsys sensorservice"))
        except MalformedOutput:
            listing = []
        kinds |= {SensorKind(TYPE_TO_KIND[s.type]) for s in listing if s.type in TYPE_TO_KIND}
        return kinds

    async def read(self, sensor: SensorKind) -> Reading:
        if sensor is SensorKind.location:
            values = await self._location()
        elif sensor is SensorKind.battery:
            values = parse_dumpsys_battery(await self._run("dumpsys battery"))
        elif sensor in KIND_TO_TYPE:
            values = await self._hardware(sensor)
        else:
            raise SensorUnsupported(f"{sensor.value} cannot be read over adb")
        return Reading(sensor=sensor, values=values, taken_at=self._clock(), source=self.name)

    async def _location(self) -> dict[str, Any]:
        fix = best_fix(await self._run("dumpsys location"))
        try:
            uptime = parse_uptime(await self._run("cat /proc/uptime"))
        except SensorError:
            uptime = None  # the fix is still good; only its age is unknown
        return {"latitude": fix.latitude, "longitude": fix.longitude, "altitude": fix.altitude,
                "horizontalAccuracy": fix.horizontal_accuracy, "verticalAccuracy": fix.vertical_accuracy,
                "speed": fix.speed, "bearing": fix.bearing, "provider": fix.provider,
                "ageSeconds": _round(fix.age_seconds(uptime))}

    async def _hardware(self, sensor: SensorKind) -> dict[str, Any]:
        text = await self._run("dumpsys sensorservice")
        android_type = KIND_TO_TYPE[sensor]
        if not any(s.type == android_type for s in parse_sensor_list(text)):
            raise SensorUnsupported(f"this device has no {android_type} sensor")
        found = latest_event_for(text, android_type)
        if found is None:
            # dumpsys only shows events while an app listens; adb cannot sample on demand
            raise NoReading(f"no recent {android_type} events: no app is listening to it right now, "
                            "and adb cannot sample a sensor on demand (use the Termux source)")
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
