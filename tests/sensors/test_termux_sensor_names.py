"""A Termux reading is the named kind's sensor's, or none at all.

What broke (red team, sensors): ``termux-sensor -l`` lists names only, and each kind was served by the first
name that held one of its words anywhere: "Geomagnetic Rotation Vector" (a quaternion) was the compass,
"Backlight" the light sensor, and of two accelerometers the first listed won. Now a name fits a kind by whole
words, none of another sensor type's (rotation, vector, uncalibrated, gyroscope, ...), and fits one kind only;
a kind two differently named sensors fit, a name listed twice (or twice but for case: termux-sensor matches
names without case, so which one it would read cannot be told) or holding a comma (termux-sensor splits its
argument on commas) serves nothing, as a chip name other sensor types share does over adb. The wake-up and
non-wake-up listings of one sensor are one sensor (the non-wake-up one is read). The commands are real
subprocesses.
"""

from __future__ import annotations

import json
import shlex
import stat
from pathlib import Path

import pytest

from device_tools.sensors.errors import SensorError
from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import SensorKind

pytestmark = pytest.mark.timeout(120)


def phone(tmp_path: Path, names: list[str]) -> tuple[TermuxSource, Path]:
    """termux-sensor listing ``names``; ``-s NAME`` prints a sample for exactly that name (values by its
    position), and every call is logged."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = bin_dir / "calls.log"
    listing = json.dumps({"sensors": names})
    samples = {n: {n: {"values": [float(i + 1), 9.8, 0.5]}} for i, n in enumerate(names)}
    table = bin_dir / "samples.json"
    table.write_text(json.dumps(samples))
    script = bin_dir / "termux-sensor"
    script.write_text(f"""#!/bin/sh
printf '%s\\n' "$*" >> {shlex.quote(str(log))}
case "$1" in
  -l) printf '%s\\n' {shlex.quote(listing)} ;;
  -c) echo '{{}}' ;;
  -s) python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get(sys.argv[2], {{}})))' \\
        {shlex.quote(str(table))} "$2" ;;
esac
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return TermuxSource(str(bin_dir), timeout=10), log


READS = [
    # (listed names, kind, the name read, or None: serves nothing)
    (["Geomagnetic Rotation Vector", "AK09918 Magnetometer"], SensorKind.compass, "AK09918 Magnetometer"),
    (["GeoMag Rotation Vector Sensor", "mag uncal", "Magnetic Field"], SensorKind.compass, "Magnetic Field"),
    (["Backlight", "TMD3702 Ambient Light"], SensorKind.ambient_light, "TMD3702 Ambient Light"),
    (["Linear Acceleration", "Accelerometer Uncalibrated", "BMI260 Accelerometer"], SensorKind.motion,
     "BMI260 Accelerometer"),
    (["lsm6dso LSM6DSO Accelerometer Wakeup", "lsm6dso LSM6DSO Accelerometer Non-wakeup"], SensorKind.motion,
     "lsm6dso LSM6DSO Accelerometer Non-wakeup"),
    (["BMP390 Pressure", "Pressure Wake-Up"], SensorKind.barometer, None),  # two names: which is it?
    (["BMI260 Accelerometer", "LSM6DSO Accelerometer"], SensorKind.motion, None),
    (["Light", "LIGHT"], SensorKind.ambient_light, None),  # termux-sensor tells them apart by no case
    (["Light", "Light"], SensorKind.ambient_light, None),
    (["Accelerometer, Primary"], SensorKind.motion, None),  # -s "Accelerometer, Primary" asks for two
    (["Accel Mag Combo"], SensorKind.motion, None),  # fits two kinds
    (["Accel Mag Combo"], SensorKind.compass, None),
    (["Accelerometer Gyroscope"], SensorKind.motion, None),  # a name of another type's too
    (["Wrist Tilt Gesture accel"], SensorKind.motion, None),
    (["Game Rotation Vector", "Gravity", "Step Counter"], SensorKind.motion, None),
]


@pytest.mark.parametrize(("names", "kind", "read"), READS)
async def test_a_kind_is_served_by_its_one_sensor_or_none(tmp_path, names, kind, read):
    source, log = phone(tmp_path, names)
    if read is None:
        with pytest.raises(SensorError) as refused:
            values = (await source.read(kind)).values
            pytest.fail(f"{kind.value} read from {names}: {values}")
        assert refused.value.code == "sensor_unsupported"
        assert not [c for c in log.read_text().splitlines() if c.startswith("-s")]  # nothing was listened to
        assert kind not in await source.available()
    else:
        values = (await source.read(kind)).values
        assert values["hardware"] == read
        assert f"-s {read} -n 1" in log.read_text().splitlines()
