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


# A phone with a work profile: every provider's section has the same parts, one for each running user
TWO_USERS = (
    "Location Manager State:\n  Location Providers:\n"
    "    passive provider:\n"
    "      user 0:\n        last location=null\n        last coarse location=null\n"
    "      user 10:\n        last location=null\n        last coarse location=null\n"
    "    gps provider:\n"
    "      user 0:\n"
    "        last location=Location[gps 52.520100,13.405000 hAcc=4.8 et=+2h17m10s384ms]\n"
    "        last coarse location=null\n"
    "      user 10:\n"
    "        registration state:\n          com.google.android.gms[u10]: PASSIVE_INTERVAL\n"
    "        last location=Location[gps 52.520100,13.405000 hAcc=4.8 et=+2h17m10s384ms]\n"
    "        last coarse location=null\n"
    "  Historical Aggregate Location Provider Data:\n"
)
TWO_USERS_REGISTRATION = "          com.google.android.gms[u10]: PASSIVE_INTERVAL\n"


def test_a_work_profile_dump_is_read():
    assert [f.provider for f in parse_dumpsys_location(TWO_USERS)] == ["gps", "gps"]


# A tag that writes the header of a provider the phone lacks (gps_hardware: a name the platform has, so the
# names' allow list passes it) and a fix under it. Each section alone looks whole: the forged one has its one
# fix, the gps section its user 0 part; what no real dump does is print users' parts in one section and not
# in another (the platform prints the same running users under every provider, or none when there is one).
FORGED_USERS = {
    "a section without users among sections with them":
        f"x\n    gps_hardware provider:\n      last location={FAKE}\n        y",
    "a section of other users":
        f"x\n    gps_hardware provider:\n      user 0:\n        last location={FAKE}\n          y",
    "users' parts and a fix of no user in one section":
        f"x\n    gps_hardware provider:\n      last location={FAKE}\n      user 0:\n"
        "        last location=null\n      user 10:\n          y",
}


@pytest.mark.parametrize("name", sorted(FORGED_USERS))
def test_a_forged_header_of_a_provider_the_phone_lacks_refuses_the_dump(name):
    dump = TWO_USERS.replace(TWO_USERS_REGISTRATION,
                             f"          10123/com.evil[{FORGED_USERS[name]}]: PASSIVE_INTERVAL\n")
    with pytest.raises(MalformedOutput):
        best_fix(dump)


async def test_the_adb_source_refuses_a_forged_provider_of_a_work_profile_phone():
    dump = TWO_USERS.replace(TWO_USERS_REGISTRATION, "          10123/com.evil[" + FORGED_USERS[
        "a section without users among sections with them"] + "]: PASSIVE_INTERVAL\n")
    uptime = recorded("proc_uptime.txt")
    server = FakeAdbServer({"dumpsys location": dump, "cat /proc/uptime": uptime}).start()
    try:
        source = AdbSource(host="127.0.0.1", port=server.port, timeout=10, clock=lambda: 1_700_000_000.0)
        with pytest.raises(MalformedOutput):
            await source.read(SensorKind.location)
    finally:
        server.stop()
