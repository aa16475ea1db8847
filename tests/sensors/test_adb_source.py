"""The adb source driven by real adbutils against a fake adb server on 127.0.0.1 (recorded phone output)."""

from __future__ import annotations


import pytest
from tests.conftest import free_port
from tests.sensors.sensors_support import recorded
from tests.sensors.sensors_fake_adb import FakeAdbServer

from device_tools.sensors.errors import MalformedOutput, NoReading, SensorUnsupported, SourceUnavailable
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from device_tools.sensors.sources.adb import AdbSource

pytestmark = pytest.mark.timeout(60)

PHONE = {
    "dumpsys location": recorded("dumpsys_location_aosp.txt"),
    "cat /proc/uptime": recorded("proc_uptime.txt"),
    "dumpsys battery": recorded("dumpsys_battery_samsung_eventlog.txt"),
    "dumpsys sensorservice": recorded("dumpsys_sensorservice.txt"),
}


@pytest.fixture
def phone():
    server = FakeAdbServer(PHONE).start()
    yield server
    server.stop()


def source_for(server: FakeAdbServer, **kw) -> AdbSource:
    return AdbSource(host="127.0.0.1", port=server.port, timeout=10, clock=lambda: 1_700_000_000.0, **kw)


async def test_location_over_adb_uses_uptime_for_age(phone):
    reading = await source_for(phone).read(SensorKind.location)
    v = reading.values
    assert (v["latitude"], v["longitude"], v["altitude"], v["provider"]) == (52.5201, 13.405, 35.2, "gps")
    assert v["ageSeconds"] == pytest.approx(15.226)
    assert reading.source == "adb:fake-serial"
    assert phone.shell_commands() == ["dumpsys location", "cat /proc/uptime"]


async def test_battery_over_adb(phone):
    v = (await source_for(phone).read(SensorKind.battery)).values
    assert v["percentage"] == 100.0 and v["health"] == "good" and v["plugged"] == "ac"


async def test_hardware_sensors_over_adb(phone):
    src = source_for(phone)
    motion = (await src.read(SensorKind.motion)).values
    assert (motion["x"], motion["y"], motion["z"]) == (0.11, 9.79, 0.21)
    assert motion["hardware"] == "ICM45631 Accelerometer"
    compass = (await src.read(SensorKind.compass)).values
    assert compass["heading"] == 90.0  # field pointing to -x: the phone's top faces east
    assert (await src.read(SensorKind.ambient_light)).values["lux"] == 312.0
    with pytest.raises(NoReading, match="cannot sample a sensor on demand"):
        await src.read(SensorKind.barometer)  # listed, but nobody listens: no events
    with pytest.raises(SensorUnsupported):
        await src.read(SensorKind.nearby_devices)
    assert await src.available() == {SensorKind.location, SensorKind.battery, SensorKind.motion,
                                     SensorKind.compass, SensorKind.ambient_light, SensorKind.barometer}


async def test_through_the_bridge_the_scope_is_applied(phone, make_bridge):
    bridge = make_bridge(source_for(phone))
    bridge.consents.grant("agent-a", SensorKind.location, Scope.minimal)
    resp = await bridge.handle({"sensor": "location", "scope": "minimal", "policy_tag": "weather"}, "agent-a")
    assert resp.payload == {"latitude": 52.0, "longitude": 13.0}  # whole degrees


async def test_null_location_and_malformed_output():
    server = FakeAdbServer({"dumpsys location": recorded("dumpsys_location_null.txt"),
                            "dumpsys battery": "Can't find service: battery\n",
                            "dumpsys sensorservice": "\x00\x01 binary junk"}).start()
    try:
        src = source_for(server)
        with pytest.raises(NoReading, match="no last known location"):
            await src.read(SensorKind.location)
        with pytest.raises(SourceUnavailable, match="service or command is missing"):
            await src.read(SensorKind.battery)
        with pytest.raises(MalformedOutput):
            await src.read(SensorKind.motion)
        assert await src.available() == {SensorKind.location, SensorKind.battery}
    finally:
        server.stop()


async def test_missing_command_on_device():
    server = FakeAdbServer({}).start()
    try:
        with pytest.raises(SourceUnavailable, match="service or command is missing"):
            await source_for(server).read(SensorKind.battery)
    finally:
        server.stop()


async def test_no_adb_server_is_a_clear_error_and_starts_nothing():
    port = free_port()  # a port with nobody listening
    src = AdbSource(host="127.0.0.1", port=port)
    with pytest.raises(SourceUnavailable, match=f"no adb server at 127.0.0.1:{port}"):
        await src.read(SensorKind.location)


async def test_no_device_wrong_serial_and_ambiguous_devices():
    none = FakeAdbServer({}, serials=()).start()
    two = FakeAdbServer(PHONE, serials=("phone-1", "phone-2")).start()
    try:
        with pytest.raises(SourceUnavailable, match="no device connected"):
            await source_for(none).read(SensorKind.battery)
        with pytest.raises(SourceUnavailable, match="several devices"):
            await source_for(two).read(SensorKind.battery)
        with pytest.raises(SourceUnavailable, match="'phone-9' is not connected"):
            await source_for(two, serial="phone-9").read(SensorKind.battery)
        v = (await source_for(two, serial="phone-2").read(SensorKind.battery)).values
        assert v["percentage"] == 100.0
    finally:
        none.stop()
        two.stop()
