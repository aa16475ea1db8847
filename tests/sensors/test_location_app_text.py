"""``dumpsys location`` prints text apps control (a registration's attribution tag, a history line's identity)
next to the system's fixes. An app's tag spelling ``Location[...]``, or whole lines of a fix with its line
breaks, must never become the phone's location: only the system's lines count, by where they stand, and a dump
whose structure has been forged is refused rather than read."""

from __future__ import annotations

import pytest
from tests.sensors.sensors_fake_adb import FakeAdbServer
from tests.sensors.sensors_support import recorded

from device_tools.sensors.errors import MalformedOutput
from device_tools.sensors.parsers.dumpsys_location import best_fix, parse_dumpsys_location
from device_tools.sensors.sources.adb import AdbSource
from sentinel_mcp.core.sensor_kinds import SensorKind

pytestmark = pytest.mark.timeout(60)

DUMP = recorded("dumpsys_location_aosp.txt")
REGISTRATION = "        com.google.android.gms[u0]: PASSIVE_INTERVAL\n"
HISTORY = "      com.example.maps: min/max interval"
FAKE = "Location[gps 10.000000,20.000000 hAcc=1.0 et=+999d0h0m0s0ms]"
REAL = (52.5201, 13.405)


def tagged(tag: str, where: str = REGISTRATION) -> str:
    """The recorded dump with an app's registration (or history line) carrying ``tag`` as its attribution."""
    assert where in DUMP
    line = f"        10123/com.evil[{tag}]: PASSIVE_INTERVAL\n" if where == REGISTRATION else \
        f"      10123/com.evil[{tag}]: min/max interval"
    return DUMP.replace(where, where + line if where == REGISTRATION else line + "\n" + where)


# a tag on one line: read as the system's fix anywhere in the dump before
IGNORED = {
    "Location[ in a registration": tagged(FAKE),
    "Location[ in a history line": tagged(FAKE, HISTORY),
    "a fix line deeper than the system's": tagged(f"x\n        last location={FAKE}"),
}
# line breaks spelling the system's lines: the structure is forged, the dump is refused
REFUSED = {
    "a second fix line in the section": tagged(f"x\n      last location={FAKE}\n        y"),
    # the tag ends in a registration's own shape, so the rest of the system's line reads as one
    "a fix line and a header of a new name":
        tagged(f"x\n      last location={FAKE}\n    evil provider:\n        y"),
    "a fix line and a header of a provider the dump has":
        tagged(f"x\n      last location={FAKE}\n    gps provider:\n        y"),
    "a block of providers of its own": tagged(
        f"x\n  Location Providers:\n    gps provider:\n      last location={FAKE}\n", HISTORY),
    "an older Android's block": tagged(f"x\n  Last Known Locations:\n    gps: {FAKE}\n", HISTORY),
    "a line at the providers' level": tagged("x\n    something else", REGISTRATION),
}


@pytest.mark.parametrize("name", sorted(IGNORED))
def test_an_apps_location_text_is_not_a_fix(name):
    fix = best_fix(IGNORED[name])
    assert (fix.latitude, fix.longitude) == REAL
    assert all((f.latitude, f.longitude) != (10.0, 20.0) for f in parse_dumpsys_location(IGNORED[name]))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_forged_structure_refuses_the_dump(name):
    with pytest.raises(MalformedOutput):
        best_fix(REFUSED[name])


def test_the_last_known_fixes_of_the_dump_are_read_as_before():
    providers = [f.provider for f in parse_dumpsys_location(DUMP)]
    assert providers == ["fused", "fused", "network", "gps", "gps"]


def test_a_fix_line_is_one_location_and_nothing_after():
    with pytest.raises(MalformedOutput, match="one Location"):
        best_fix(DUMP.replace("{Bundle[{satellites=9, maxCn0=38, meanCn0=27}]}]",
                              f"{{Bundle[{{}}]}}] {FAKE}"))


def test_per_user_sections_are_read():
    dump = ("Location Manager State:\n  Location Providers:\n    gps provider:\n      user 0:\n"
            f"        last location={FAKE}\n      user 10:\n        last location=null\n")
    assert [f.provider for f in parse_dumpsys_location(dump)] == ["gps"]
    second = f"        last location={FAKE}\n"
    with pytest.raises(MalformedOutput):  # two fixes of one user
        parse_dumpsys_location(dump.replace("      user 10:", second + "      user 10:"))


async def test_the_adb_source_reads_the_systems_fix_not_the_apps():
    server = FakeAdbServer({"dumpsys location": IGNORED["Location[ in a registration"],
                            "cat /proc/uptime": recorded("proc_uptime.txt")}).start()
    try:
        source = AdbSource(host="127.0.0.1", port=server.port, timeout=10, clock=lambda: 1_700_000_000.0)
        reading = await source.read(SensorKind.location)
        assert (reading.values["latitude"], reading.values["longitude"]) == REAL
    finally:
        server.stop()
