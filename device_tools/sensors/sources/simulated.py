"""A deterministic simulated phone: a walk around a loop in San Francisco, plus motion, compass, light,
barometer, battery and nearby devices. Every value is a pure function of the clock, so tests that inject
a clock get exactly reproducible readings."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from device_tools.sensors.errors import SensorUnsupported
from sentinel_mcp.core.sensor_kinds import SensorKind
from device_tools.sensors.reading import Reading

# waypoints (lat, lon, altitude m) of a closed walk; ~1.4 m/s walking speed
PATH: list[tuple[float, float, float]] = [
    (37.7749295, -122.4194155, 16.0),  # Civic Center
    (37.7793, -122.4192, 18.0),
    (37.7841, -122.4075, 22.0),  # Union Square
    (37.7795, -122.4043, 12.0),
]
WALK_SPEED_MPS = 1.4
START_EPOCH = 1_760_788_800.0  # 2025-10-18T12:00:00Z, the design's example time
SUPPORTED = {SensorKind.location, SensorKind.battery, SensorKind.motion, SensorKind.compass,
             SensorKind.ambient_light, SensorKind.barometer, SensorKind.nearby_devices}


def _distance_m(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    lat = math.radians((a[0] + b[0]) / 2)
    dy = (b[0] - a[0]) * 111_320.0
    dx = (b[1] - a[1]) * 111_320.0 * math.cos(lat)
    return math.hypot(dx, dy)


def _bearing_deg(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    lat = math.radians((a[0] + b[0]) / 2)
    dy = b[0] - a[0]
    dx = (b[1] - a[1]) * math.cos(lat)
    return math.degrees(math.atan2(dx, dy)) % 360


class SimulatedSource:
    name = "simulated"

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._legs = [(PATH[i], PATH[(i + 1) % len(PATH)]) for i in range(len(PATH))]
        self._loop_m = sum(_distance_m(a, b) for a, b in self._legs)

    async def available(self) -> set[SensorKind]:
        return set(SUPPORTED)

    async def close(self) -> None:
        return None

    def _position(self, t: float) -> tuple[float, float, float, float]:
        walked = ((t - START_EPOCH) * WALK_SPEED_MPS) % self._loop_m
        for a, b in self._legs:
            leg = _distance_m(a, b)
            if walked <= leg:
                f = walked / leg
                return (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f,
                        a[2] + (b[2] - a[2]) * f, _bearing_deg(a, b))
            walked -= leg
        a, b = self._legs[-1]
        return b[0], b[1], b[2], _bearing_deg(a, b)

    async def read(self, sensor: SensorKind) -> Reading:
        if sensor not in SUPPORTED:
            raise SensorUnsupported(f"the simulated device has no {sensor.value} sensor")
        t = self._clock()
        lat, lon, alt, heading = self._position(t)
        phase = (t - START_EPOCH) * 2 * math.pi / 1.1  # ~1.1 s step cycle
        if sensor is SensorKind.location:
            values = {"latitude": round(lat, 7), "longitude": round(lon, 7), "altitude": round(alt, 1),
                      "horizontalAccuracy": 5.0, "verticalAccuracy": 3.0, "speed": WALK_SPEED_MPS,
                      "bearing": round(heading, 1), "provider": "gps", "ageSeconds": 0.0}
        elif sensor is SensorKind.motion:
            values = {"x": round(0.3 * math.sin(phase), 3), "y": round(9.81 + 0.8 * math.sin(2 * phase), 3),
                      "z": round(0.5 * math.cos(phase), 3), "unit": "m/s^2"}
        elif sensor is SensorKind.compass:
            values = {"heading": round(heading, 1), "unit": "degrees"}
        elif sensor is SensorKind.ambient_light:
            values = {"lux": round(800 + 200 * math.sin((t - START_EPOCH) / 60), 1)}
        elif sensor is SensorKind.barometer:
            values = {"pressure_hpa": round(1013.25 - alt * 0.12, 2)}
        elif sensor is SensorKind.battery:
            drained = ((t - START_EPOCH) / 360.0) % 80  # 1 % per 6 minutes, wraps from 100 % to 20 %
            values = {"percentage": round(100 - drained, 1), "charging": False, "status": "discharging",
                      "plugged": "unplugged", "health": "good", "temperature_c": 29.3, "voltage_mv": 4215,
                      "technology": "Li-ion", "present": True}
        else:
            values = {
                "devices": [
                    {
                        "name": "Pixel Buds Pro",
                        "address": "F4:5C:89:12:AB:01",
                        "kind": "bluetooth",
                        "rssi": -48 + int(3 * math.sin(phase)),
                    },
                    {
                        "name": "Galaxy Watch6",
                        "address": "A8:9C:ED:44:21:7F",
                        "kind": "bluetooth_le",
                        "rssi": -67,
                    },
                    {"name": "CoffeeShop-Guest", "address": "3C:84:6A:9E:10:22", "kind": "wifi", "rssi": -71},
                ]
            }
        return Reading(sensor=sensor, values=values, taken_at=t, source=self.name)
