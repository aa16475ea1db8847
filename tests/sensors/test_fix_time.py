"""A location's time is its fix's, never the moment it was read.

What broke (red team, sensors): at minimal and standard scope the answer's ``timestamp`` was the read time,
and the fix's age (``ageSeconds``) was shown at detailed scope only, so a last-known fix an hour old
(``termux-location`` prints its age, ``dumpsys location`` its ``et=``) reached the model as the phone's
position now. Now the timestamp is the fix's own time, cut down to the scope (minimal: to 10 minutes,
standard: to the minute, never later than the fix); a fix older than the requester's ``max_age`` is refused
(``stale_reading``), and without one a fix older than ``DEFAULT_MAX_AGE`` is said to be old (``"stale":
true``). A fix whose age cannot be told is refused: it could be any age. Real subprocesses print the phone's
output (termux) and real adbutils talks to the fake adb server; the clock is injected.
"""

from __future__ import annotations

import json
import shlex
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.sensors.sensors_fake_adb import FakeAdbServer
from tests.sensors.test_adb_source import PHONE

from device_tools.sensors.errors import SensorError
from device_tools.sensors.fix_time import DEFAULT_MAX_AGE
from device_tools.sensors.sources.adb import AdbSource
from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(120)


def termux_phone(tmp_path: Path, elapsed_ms: object, clock) -> TermuxSource:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fix = {"latitude": 37.7793, "longitude": -122.4192, "accuracy": 12.0, "provider": "gps",
           "elapsedMs": elapsed_ms}
    path = bin_dir / "termux-location"
    path.write_text(f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(json.dumps(fix))}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return TermuxSource(str(bin_dir), timeout=10, clock=clock)


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def read(bridge, scope: str, **extra):
    request = {"sensor": "location", "scope": scope, "policy_tag": "nearby-search", "retention": 0, **extra}
    return await bridge.handle(request, "agent-a")


@pytest.mark.parametrize(("scope", "cut"), [("minimal", 600), ("standard", 60), ("detailed", 1)])
async def test_an_hour_old_fix_carries_its_own_time_cut_to_the_scope(tmp_path, make_bridge, clock, scope,
                                                                   cut):
    clock.advance(7 * 60 + 25)  # 12:07:25 on the read; the fix is from 11:07:25
    bridge = make_bridge(termux_phone(tmp_path, 3_600_000, clock))
    bridge.consents.grant("agent-a", SensorKind.location, Scope(scope))
    response = await read(bridge, scope)
    fix = clock.now - 3600
    assert response.timestamp == iso(fix // cut * cut), (scope, response.timestamp)
    assert response.payload.get("stale") is True  # older than the default max age: said to be old
    # asked for nothing older than 10 minutes: refused, nothing returned
    clock.advance(1.1)  # past the location's 1 Hz limit
    with pytest.raises(SensorError) as refused:
        await read(bridge, scope, max_age=600)
    assert refused.value.code == "stale_reading" and "37.77" not in refused.value.message
    assert bridge.audit.rows()[-1]["decision"] == "failed"


async def test_a_fresh_fix_is_not_said_to_be_old_and_passes_a_max_age(tmp_path, make_bridge, clock):
    bridge = make_bridge(termux_phone(tmp_path, 840, clock))
    bridge.consents.grant("agent-a", SensorKind.location, Scope.standard)
    response = await read(bridge, "standard", max_age=DEFAULT_MAX_AGE)
    assert "stale" not in response.payload and response.timestamp == iso((clock.now - 0.84) // 60 * 60)
    clock.advance(1.1)  # past the location's 1 Hz limit
    # at standard the time is shown to the minute, and max_age judges that (test_coarse_fix_time.py): a fix
    # 0.84 s old may be of this very second, so max_age 0 serves it; the detailed scope judges the exact age
    assert "stale" not in (await read(bridge, "standard", max_age=0)).payload
    bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed)
    clock.advance(1.1)
    with pytest.raises(SensorError) as refused:  # nothing older than now: a fix 0.84 s old is too old
        await read(bridge, "detailed", max_age=0)
    assert refused.value.code == "stale_reading"


async def test_a_fix_older_than_the_default_is_said_to_be_old(tmp_path, make_bridge, clock):
    # at minimal the time is shown to ten minutes: a fix is said to be old when its shown time says so, older
    # than the default by the whole step (a flag that turned at its 121st second told its time to the second)
    bridge = make_bridge(termux_phone(tmp_path, (DEFAULT_MAX_AGE + 600 + 1) * 1000, clock))
    bridge.consents.grant("agent-a", SensorKind.location, Scope.minimal)
    assert (await read(bridge, "minimal")).payload == {"latitude": 37.0, "longitude": -122.0, "stale": True}


# ages no phone prints for a fix: below zero (a fix from the future would be shown as fresh), past the epoch,
# not a number, left out
@pytest.mark.parametrize("elapsed_ms", [-1, -3_600_000, 1e300, 10**16, "5", None])
async def test_a_fix_of_no_telling_age_is_refused(tmp_path, make_bridge, clock, elapsed_ms):
    bridge = make_bridge(termux_phone(tmp_path, elapsed_ms, clock))
    for scope in Scope:
        bridge.consents.grant("agent-a", SensorKind.location, scope)
        clock.advance(1.1)  # past the location's 1 Hz limit
        with pytest.raises(SensorError) as refused:
            response = await read(bridge, scope.value)
            pytest.fail(f"{elapsed_ms!r} at {scope.value}: {response}")
        assert refused.value.code in ("no_reading", "malformed_output"), refused.value.code


async def test_over_adb_the_fix_time_is_the_read_time_less_uptime_less_et(make_bridge, clock):
    server = FakeAdbServer(PHONE).start()  # recorded: uptime 8245.61 s, the gps fix's et=+2h17m10s384ms
    try:
        source = AdbSource(host="127.0.0.1", port=server.port, timeout=10, clock=clock)
        bridge = make_bridge(source)
        bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed)
        response = await read(bridge, "detailed")
        age = response.payload["ageSeconds"]
        assert age == pytest.approx(15.226)
        assert response.timestamp == iso(clock.now - age)
    finally:
        server.stop()


async def test_over_adb_a_fix_without_uptime_is_refused(make_bridge, clock):
    server = FakeAdbServer({k: v for k, v in PHONE.items() if "uptime" not in k}).start()
    try:
        bridge = make_bridge(AdbSource(host="127.0.0.1", port=server.port, timeout=10, clock=clock))
        bridge.consents.grant("agent-a", SensorKind.location, Scope.detailed)
        with pytest.raises(SensorError) as refused:
            await read(bridge, "detailed")
        assert refused.value.code == "no_reading"
    finally:
        server.stop()
