"""One phone, one gate: the device and sensors built-ins configured for the same adb phone share ONE
``CommandGate`` (handed out by the gateway's ``Services.devices``), so a sensor read and a screen action are
in the one record and under the one rule set; a sensor path holds only a view of it that sends the four
sensor reads and nothing else (many spellings); the record is bounded however long the session runs."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult
from tests.device.device_fake_adb import FakeAdbServer as DeviceFakeAdb
from tests.device.device_helpers import element, snapshot_id
from tests.sensors.sensors_fake_adb import FakeAdbServer as SensorFakeAdb
from tests.sensors.test_adb_source import PHONE
from tests.sensors.test_through_gate import BYPASSES

from device_tools.adb_backend import AdbBackend
from device_tools.errors import CommandRefused
from device_tools.gate import SENT_KEPT, CommandGate, ReadOnlyGate, shared_adb_gate
from device_tools.phone_identity import adb_phone_key, attached_serials
from device_tools.sensors.errors import ReadRefused
from sentinel_mcp.core.sensor_kinds import SensorKind
from device_tools.sensors.server import create_server as sensors_server
from device_tools.sensors.settings import SensorSettings
from device_tools.sensors.sources.factory import make_source
from device_tools.simulated import SimulatedDevice
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.builtin import BuiltinContext, Services

pytestmark = pytest.mark.timeout(90)

READ = {"sensor": "battery", "scope": "standard", "policy_tag": "battery-check", "task_id": "t-1"}
# the rest of the phone's read-only commands: the device may send them, a sensor path may not
DEVICE_READS = [
    ["uiautomator", "dump", "/dev/tty"],
    ["screencap", "-p"],
    ["getevent", "-l"],
    ["content", "query", "--uri", "content://sms/inbox", "--projection", "body"],
    ["content", "query", "--uri", "content://com.android.contacts/data", "--projection", "data1"],
]


class Person:
    """Says yes to every question: the device's confirmations and the sensors' consent."""

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        props = (params.requested_schema or {}).get("properties", {})
        content: dict[str, Any] = {k: True for k in props}
        if "remember" in props:
            content["remember"] = "this request only"
        return ElicitResult(action="accept", content=content)


@pytest.fixture
def phone():
    fake = DeviceFakeAdb().start()
    for _ in range(4):  # the simulated phone has no battery: the adb server answers with a recorded one
        fake.script["dumpsys battery"].append(PHONE["dumpsys battery"].encode())
    yield fake
    fake.stop()


def config(tmp_path, port: int, sensors: dict | None = None, device: dict | None = None) -> Any:
    adb = {"serial": "fake-serial", "adb_port": port}
    return parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(tmp_path),
                "builtins": ["device", "sensors"],
                "device": {"backend": "adb", "risk_classifier": False, "dump_backoff": 0}
                | (adb if device is None else device),
                "sensors": {"source": "adb"} | (adb if sensors is None else sensors),
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )


def the_one_gate(rt: Any) -> CommandGate:
    """The gateway started cleanly with one gate, the device built-in's."""
    assert not rt.problems, rt.problems
    assert len(rt.services.devices) == 1
    return rt.gateway.manager.upstreams["device"].target.server.runtime.gate


async def test_device_and_sensors_on_one_phone_share_one_gate_and_one_record(tmp_path, phone):
    async with running_gateway(config(tmp_path, phone.port)) as rt:
        gate = the_one_gate(rt)
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            r = await c.call_tool("sensors__sensor_read", READ)
            assert not r.is_error, r.content
            home = await c.call_tool("device__screen_read", {})
            r = await c.call_tool(
                "device__click",
                {"element_id": element(home, text="Messages")["id"], "snapshot_id": snapshot_id(home)},
            )
            assert not r.is_error, r.content
    sent = [" ".join(argv) for argv in gate.sent]
    assert "dumpsys battery" in sent and "input tap 162 1630" in sent  # one record: the sensor's and the tap
    assert sent.index("dumpsys battery") < sent.index("input tap 162 1630")
    # what reached the phone is exactly what the one gate let through (reads go out as exec: or shell:)
    assert [c.partition(":")[2] for c in phone.log if c.startswith(("shell:", "exec:"))] == sent


async def test_different_phones_get_different_gates(tmp_path, phone):
    async with running_gateway(
        config(tmp_path, phone.port, {"serial": "other-serial", "adb_port": phone.port})
    ) as rt:
        assert len(rt.services.devices) == 2


async def test_a_sensors_builtin_alone_reads_through_a_gate_of_its_own(tmp_path):
    fake = SensorFakeAdb(PHONE).start()
    try:
        ctx = BuiltinContext(
            name="sensors",
            data_dir=tmp_path,
            settings={"source": "adb", "adb_port": fake.port, "serial": "fake-serial"},
        )
        async with Client(sensors_server(ctx), mode="auto", elicitation_callback=Person()) as c:
            r = await c.call_tool("sensor_read", READ)
            assert not r.is_error, r.content
        [gate] = ctx.services.devices._objects.values()  # its own, in its own Services
        assert gate.sent == [["dumpsys", "battery"]]
        assert fake.shell_commands() == ["dumpsys battery"]
    finally:
        fake.stop()


async def test_a_sensor_path_on_the_shared_gate_sends_only_sensor_reads(phone):
    services = Services()
    settings = SensorSettings(source="adb", adb_port=phone.port, serial="fake-serial")
    shared = make_source(settings, devices=services.devices)
    [gate] = services.devices._objects.values()
    assert isinstance(gate, CommandGate)
    view = shared._gate  # type: ignore[attr-defined]
    assert isinstance(view, ReadOnlyGate) and not hasattr(view, "run") and not hasattr(view, "backend")
    weird: list[Any] = [
        ["dumpsys", b"battery"],
        ["dumpsys", ["battery"]],
        ("dumpsys", "battery", ""),
        ["dumpsys", "battery", None],
        ["dumpsys\x00", "battery"],
        ["dumpsys", "battery "],
    ]
    for argv in BYPASSES + DEVICE_READS + weird:
        with pytest.raises(ReadRefused, match="the device gate refused"):
            await shared._run(argv)  # type: ignore[attr-defined]
        with pytest.raises(CommandRefused):
            await view.read_bytes(argv)
    # nothing reached the gate's record or the phone; a real sensor read still does
    assert gate.sent == [] and gate.sent_count == 0
    assert [c for c in phone.log if c.startswith(("shell:", "exec:"))] == []
    await shared.read(SensorKind.battery)
    assert gate.sent == [["dumpsys", "battery"]]
    # the gate itself still refuses anything that changes the phone without an approval
    for argv in (["input", "tap", "1", "1"], ["reboot"], ["dumpsys", "battery"]):
        with pytest.raises(CommandRefused, match="not approved"):
            await gate.run(argv, None)
    assert gate.sent == [["dumpsys", "battery"]]


async def test_the_gate_record_is_bounded_and_counts_everything():
    gate = CommandGate(SimulatedDevice(), keep=8)
    for _ in range(20):
        await gate.read(["wm", "size"])
    assert len(gate.sent) == 8 and gate.sent_count == 20
    mark = gate.sent_count
    await gate.read(["getprop", "ro.product.model"])
    assert gate.sent_since(mark) == [["getprop", "ro.product.model"]]
    assert gate.sent_since(gate.sent_count) == []
    assert len(gate.sent_since(0)) == 8  # what is older than the record holds is gone, never made up
    assert gate.lost_since(mark) == 0 and gate.lost_since(0) == 13  # ... and how much is gone is said
    with pytest.raises(CommandRefused):
        await gate.read(["input", "tap", "1", "1"])
    assert gate.sent_count == 21  # a refused command is not counted as sent


async def test_the_default_record_stays_bounded_over_a_long_sensor_session():
    gate = CommandGate(SimulatedDevice())
    view = gate.read_only()
    for _ in range(SENT_KEPT * 2 + 5):  # bounded by count
        await view.read(["wm", "size"])
    assert len(gate.sent) == SENT_KEPT and gate.sent_count == SENT_KEPT * 2 + 5


def test_an_adb_backend_is_made_once_per_phone():
    services, made = Services(), []

    def backend() -> AdbBackend:
        made.append(1)
        return AdbBackend("s1", "127.0.0.1", 5999)

    from device_tools.gate import shared_adb_gate

    a = shared_adb_gate(services.devices, "127.0.0.1", 5999, "s1", backend)
    b = shared_adb_gate(services.devices, "127.0.0.1", 5999, "s1", backend)
    c = shared_adb_gate(None, "127.0.0.1", 5999, "s1", backend)  # run alone: its own
    assert a is b and c is not a and len(made) == 2
    services.devices.shared(("adb", "x", 1, None), object, object)
    with pytest.raises(TypeError, match="not a CommandGate"):
        shared_adb_gate(services.devices, "x", 1, None, backend)


@pytest.mark.parametrize(
    "device, sensors",
    [
        ({"serial": "fake-serial", "adb_host": "localhost"}, {}),  # the serial in one section only
        ({}, {"serial": "fake-serial", "adb_host": "::1"}),  # the other way round, another loopback
        ({"adb_host": "localhost"}, {"adb_host": "127.0.0.1"}),  # no serial in either
    ],
)
async def test_two_spellings_of_one_phone_get_one_gate(tmp_path, phone, device, sensors):
    adb = {"adb_port": phone.port}
    async with running_gateway(config(tmp_path, phone.port, adb | sensors, adb | device)) as rt:
        gate = the_one_gate(rt)
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            r = await c.call_tool("sensors__sensor_read", READ)
            assert not r.is_error, r.content
    assert [" ".join(argv) for argv in gate.sent] == ["dumpsys battery"]  # the sensor's read, in its record


def _ask(serials: list[str]):  # noqa: ANN202
    asked: list[tuple[str, int]] = []

    def ask(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return serials

    return ask, asked


@pytest.mark.parametrize(
    "host", ["localhost", "LocalHost.", " 127.0.0.1", "127.0.0.2", "::1", "[::1]", "0:0::1"]
)
def test_loopback_spellings_are_one_adb_server(host):
    assert adb_phone_key(host, 5037, "s1") == adb_phone_key("127.0.0.1", 5037, "s1")


@pytest.mark.parametrize(
    "listed, serial", [(["s1"], "s1"), ([], None), (["s1", "s2"], None), (["s1", "s1 "], None)]
)
def test_a_missing_serial_is_the_only_attached_phone_or_none(listed, serial):
    ask, asked = _ask(listed)
    assert adb_phone_key("10.0.0.5", 5555, None, ask) == ("adb", "10.0.0.5", 5555, serial)
    assert asked == [("10.0.0.5", 5555)]
    ask, asked = _ask(["other"])
    assert adb_phone_key("10.0.0.5", 5555, "s1", ask)[3] == "s1" and asked == []  # a named serial is kept


def test_other_servers_and_phones_stay_apart():
    keys = {
        adb_phone_key("127.0.0.1", 5037, "s1"),
        adb_phone_key("127.0.0.1", 5038, "s1"),
        adb_phone_key("10.0.0.5", 5037, "s1"),
        adb_phone_key("127.0.0.1", 5037, "s2"),
        adb_phone_key("phone.lan", 5037, "s1"),
    }
    assert len(keys) == 5


def test_a_phone_the_server_lists_among_several_gets_no_guess(phone):
    services = Services()
    make = lambda: AdbBackend(None, "127.0.0.1", 1)  # noqa: E731 - never connected here
    assert attached_serials("127.0.0.1", phone.port) == ["fake-serial"]
    assert attached_serials("127.0.0.1", 1) == []  # nobody there: nothing listed, no server started
    named = shared_adb_gate(services.devices, "127.0.0.1", phone.port, "fake-serial", make)
    assert shared_adb_gate(services.devices, "localhost", phone.port, None, make) is named
    phone.serial = "second"  # the server now lists another phone only: no serial is not "fake-serial"
    assert shared_adb_gate(services.devices, "localhost", phone.port, None, make) is not named
