"""A reading comes from the sensor it names, never another's. ``dumpsys sensorservice`` heads each sensor's
recent events with its name alone; when two sensors of different types share that name (chip-named sensors on
many phones: one ``lsm6ds3`` accelerometer and one ``lsm6ds3`` gyroscope; a heart-rate sensor named like the
accelerometer), whose events they are cannot be told, and the gyroscope's rad/s or the heart rate must not be
served as the phone's motion. Real adbutils against the fake adb server."""

from __future__ import annotations

import pytest
from tests.sensors.sensors_fake_adb import FakeAdbServer
from tests.sensors.test_adb_source import PHONE

from device_tools.sensors.errors import SensorError
from device_tools.sensors.sources.adb import AdbSource
from sentinel_mcp.core.sensor_kinds import SensorKind

pytestmark = pytest.mark.timeout(60)

LINE = "\tcontinuous | minRate=1.00Hz | maxRate=100.00Hz | FIFO (max,reserved) = (0, 0) events |\n"


def dump(sensors: list[tuple[str, str, int]], events: dict[str, str]) -> str:
    listed = "".join(f"0x{i + 1:08x}) {name:<24}| Vendor | ver: 1 | type: {kind}({type_id}) | perm: n/a | "
                     f"flags: 0x0\n{LINE}" for i, (name, kind, type_id) in enumerate(sensors))
    recent = "".join(f"{name} Non-wakeup: last 1 events\n\t 1 (ts=8200.0, wall=19:44:27.248) {values}\n"
                     for name, values in events.items())
    return f"Sensor List:\n{listed}Recent Sensor events:\n{recent}Active sensors:\n"


ACCEL = ("lsm6ds3", "android.sensor.accelerometer", 1)
CLASHES = {
    "a gyroscope of the same name": [ACCEL, ("lsm6ds3", "android.sensor.gyroscope", 4)],
    "a heart-rate sensor of the same name": [("lsm6ds3", "android.sensor.heart_rate", 21), ACCEL],
    "a light sensor of the same name": [ACCEL, ("lsm6ds3", "android.sensor.light", 5)],
}


async def read(text: str, sensor: SensorKind) -> dict:
    server = FakeAdbServer(PHONE | {"dumpsys sensorservice": text}).start()
    try:
        source = AdbSource(host="127.0.0.1", port=server.port, timeout=10, clock=lambda: 1_700_000_000.0)
        return (await source.read(sensor)).values
    finally:
        server.stop()


@pytest.mark.parametrize("clash", CLASHES)
async def test_events_of_a_shared_name_are_nobodys_reading(clash):
    text = dump(CLASHES[clash], {"lsm6ds3": "0.01, -0.02, 0.03, "})
    for sensor in (SensorKind.motion, SensorKind.ambient_light):
        with pytest.raises(SensorError):
            values = await read(text, sensor)
            pytest.fail(f"{sensor.value} read another sensor's events: {values}")


async def test_a_name_of_its_own_still_reads():
    text = dump([ACCEL, ("lsm6ds3 Gyroscope", "android.sensor.gyroscope", 4)],
                {"lsm6ds3": "0.11, 9.79, 0.21, ", "lsm6ds3 Gyroscope": "0.01, -0.02, 0.03, "})
    values = await read(text, SensorKind.motion)
    assert (values["x"], values["y"], values["z"], values["hardware"]) == (0.11, 9.79, 0.21, "lsm6ds3")
