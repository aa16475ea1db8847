"""Sensors reach the phone only through the device's ``CommandGate`` (the one way to the device): what the
fake adb server received is exactly what the gate let through, a command that is not a read-only sensor
read is refused with nothing sent (many spellings), and no sensor module holds an adb client of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tests.sensors.sensors_fake_adb import FakeAdbServer
from tests.sensors.test_adb_source import PHONE

import device_tools.sensors
from device_tools.adb_backend import AdbBackend
from device_tools.gate import CommandGate
from device_tools.sensors.errors import ReadRefused, SensorError
from sentinel_mcp.core.sensor_kinds import SensorKind
from device_tools.sensors.sources.adb import AdbSource
from tests.support.source_ast import parsed

pytestmark = pytest.mark.timeout(60)

BYPASSES = [
    ["input", "tap", "1", "1"],
    ["dumpsys", "location", ";", "reboot"],
    ["dumpsys", "location; reboot"],
    ["dumpsys", "location\nreboot"],
    ["dumpsys", "location", "&&", "input", "keyevent", "KEYCODE_POWER"],
    ["sh", "-c", "dumpsys location"],
    ["dumpsys location"],  # one argument: the device's sh would split it; the gate compares argv exactly
    ["DUMPSYS", "location"],
    ["dumpsys", "Location"],
    ["dumpsys", " location"],
    ["cat", "/proc/uptime", "/data/data/com.bank/shared_prefs/keys.xml"],
    ["cat", "/proc/../data/system/users/0/settings_secure.xml"],
    ["am", "start", "-a", "android.intent.action.CALL", "-d", "tel:123"],
    ["settings", "put", "secure", "location_mode", "3"],
    ["rm", "-rf", "/sdcard"],
    [],
]


@pytest.fixture
def phone():
    server = FakeAdbServer(PHONE).start()
    yield server
    server.stop()


async def test_every_sensor_read_is_what_the_gate_let_through(phone):
    gate = CommandGate(AdbBackend(host="127.0.0.1", port=phone.port))
    source = AdbSource(gate=gate, timeout=10, clock=lambda: 1_700_000_000.0)
    await source.read(SensorKind.location)
    await source.read(SensorKind.battery)
    await source.available()
    assert gate.sent == [["dumpsys", "location"], ["cat", "/proc/uptime"], ["dumpsys", "battery"],
                         ["dumpsys", "sensorservice"]]
    assert phone.shell_commands() == [" ".join(argv) for argv in gate.sent]


@pytest.mark.parametrize("argv", BYPASSES, ids=lambda a: repr(a)[:40])
async def test_a_sensor_read_that_is_not_a_sensor_read_is_refused_and_sends_nothing(phone, argv):
    for source in (AdbSource(host="127.0.0.1", port=phone.port, timeout=10),
                   AdbSource(gate=CommandGate(AdbBackend(host="127.0.0.1", port=phone.port)), timeout=10)):
        with pytest.raises(ReadRefused, match="the device gate refused") as info:
            await source._run(argv)
        assert isinstance(info.value, SensorError)  # the bridge records it as a failed request
    assert phone.shell_commands() == []


def test_no_sensor_module_talks_to_adb_itself():
    """Structural: only device_tools' backends open adb; the sensors hold a gate (import-linter keeps floors,
    this keeps the device's door single)."""
    root = Path(device_tools.sensors.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(parsed(path)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] in ("adbutils", "ppadb", "subprocess") and "termux" not in path.name
                   for n in names):
                offenders.append(f"{path.relative_to(root)}: {names}")
    assert offenders == []
