"""The Termux source running termux-api commands as real subprocesses. The commands are small scripts
printing recorded phone output (a phone cannot exist here); every invocation is logged so the tests can
check that no sensor listener is ever left running."""

from __future__ import annotations

import shlex
import stat
from pathlib import Path

import pytest
from tests.sensors.sensors_support import FIXTURES

from device_tools.sensors.errors import MalformedOutput, NoReading, SourceUnavailable
from sentinel_mcp.core.sensor_kinds import SensorKind
from device_tools.sensors.sources.termux import TermuxSource

pytestmark = pytest.mark.timeout(60)


def script(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    log = bin_dir / "calls.log"
    path.write_text(f"#!/bin/sh\necho \"{name} $*\" >> {shlex.quote(str(log))}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def calls(bin_dir: Path) -> list[str]:
    log = bin_dir / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def termux(tmp_path: Path) -> Path:
    b = tmp_path / "bin"
    b.mkdir()
    script(b, "termux-location", f"cat {FIXTURES / 'termux_location.json'}")
    script(b, "termux-battery-status", f"cat {FIXTURES / 'termux_battery.json'}")
    script(b, "termux-wifi-scaninfo", f"cat {FIXTURES / 'termux_wifi_scaninfo.json'}")
    script(b, "termux-sensor", f"""
case "$1" in
  -l) cat {FIXTURES / 'termux_sensor_list.json'} ;;
  -c) echo '{{"message": "listeners released"}}' ;;
  -s) case "$2" in
        "ICM45631 Accelerometer") cat {FIXTURES / 'termux_sensor_accel.json'} ;;
        "AK09918 Magnetometer") echo '{{"AK09918 Magnetometer": {{"values": [0.0, 30.0, -40.0]}}}}' ;;
        "TMD3702 Ambient Light") echo '{{}}'; echo '{{"TMD3702 Ambient Light": {{"values": [95.0]}}}}' ;;
        "BMP390 Pressure") sleep 30 ;;
      esac ;;
esac""")
    return b


async def test_location_battery_and_sensors(termux):
    src = TermuxSource(str(termux), timeout=10)
    loc = (await src.read(SensorKind.location)).values
    assert (loc["latitude"], loc["ageSeconds"]) == (52.5200066, 0.84)
    assert (await src.read(SensorKind.battery)).values["plugged"] == "usb"
    motion = (await src.read(SensorKind.motion)).values
    assert (motion["x"], motion["y"], motion["z"]) == (0.11, 9.79, 0.21)
    assert (await src.read(SensorKind.compass)).values["heading"] == 0.0  # field along +y: facing north
    assert (await src.read(SensorKind.ambient_light)).values["lux"] == 95.0
    assert len((await src.read(SensorKind.nearby_devices)).values["devices"]) == 2
    log = calls(termux)
    assert "termux-location -p gps -r once" in log
    reads = [c for c in log if c.startswith("termux-sensor -s")]
    assert reads and all(c.endswith("-n 1") for c in reads)  # one sample each: no listener left running
    assert "termux-sensor -s ICM45631 Accelerometer -n 1" in reads  # not the Uncalibrated/Linear one
    assert await src.available() == {SensorKind.location, SensorKind.battery, SensorKind.motion,
                                     SensorKind.compass, SensorKind.ambient_light, SensorKind.barometer,
                                     SensorKind.nearby_devices}


async def test_a_hanging_sensor_times_out_and_releases_listeners(termux):
    src = TermuxSource(str(termux), timeout=1)
    with pytest.raises(SourceUnavailable, match="no answer within 1 s"):
        await src.read(SensorKind.barometer)
    assert calls(termux)[-1] == "termux-sensor -c"


async def test_no_termux_binaries(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    src = TermuxSource(str(empty))
    with pytest.raises(SourceUnavailable, match="termux-location not found.*pkg install termux-api"):
        await src.read(SensorKind.location)
    with pytest.raises(SourceUnavailable):
        await src.available()


async def test_failing_and_malformed_commands(tmp_path):
    b = tmp_path / "bin"
    b.mkdir()
    script(b, "termux-location", f"cat {FIXTURES / 'termux_location_error.json'}")
    script(b, "termux-battery-status", "echo 'Termux:API app not installed' >&2; exit 1")
    script(b, "termux-sensor", f"cat {FIXTURES / 'termux_not_json.txt'}")
    src = TermuxSource(str(b), timeout=10)
    with pytest.raises(NoReading, match="no location fix"):
        await src.read(SensorKind.location)
    with pytest.raises(SourceUnavailable, match="exited with 1"):
        await src.read(SensorKind.battery)
    with pytest.raises(MalformedOutput, match="termux-sensor -l: output is not JSON"):
        await src.read(SensorKind.motion)
