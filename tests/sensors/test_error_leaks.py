"""A failed read never carries the device's output: not to the client, not into either audit.

A mock-location app can make ``dumpsys location`` unparsable, and a termux command can print its fix and then
fail; the parser's or source's error used to quote that text, exact coordinates included, past the granted
scope and into audit rows kept forever. Each spelling below holds a distinctive fix; none of its digits may
appear in the error or the sensor audit."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.sensors.sensors_fake_adb import FakeAdbServer
from tests.sensors.test_termux_source import script

from device_tools.sensors.errors import SensorError
from device_tools.sensors.sources.adb import AdbSource
from device_tools.sensors.sources.termux import TermuxSource
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind

pytestmark = pytest.mark.timeout(60)
SECRET = ("47.123456", "8.654321", "123456", "654321")  # the fix (and its decimals) that must not leak


def _line(body: str) -> str:
    return f"Location Manager State:\n  Last Known Locations:\n    gps: {body}\n"


ADB_SPELLINGS = {
    "unbalanced bracket in extras": _line("Location[gps 47.123456,8.654321 hAcc=5 et=+1s {Bundle[{x=[}]"),
    "longitude out of range": _line("Location[gps 47.123456,208.654321 hAcc=5 et=+1s]"),
    "three comma parts": _line("Location[gps 47,123456,8.654321 hAcc=5 et=+1s]"),
    "legacy form, no mLongitude": _line("Location[mProvider=gps,mLatitude=47.123456,mLon=8.654321]"),
    "latitude out of range": _line("Location[gps 147.123456,8.654321 hAcc=5 et=+1s]"),
}


def _assert_clean(err: SensorError, bridge) -> None:
    rows = bridge.audit.rows()
    texts = [err.message, str(err.to_dict()), *(str(r) for r in rows)]
    for text in texts:
        assert not any(s in text for s in SECRET), text
    assert rows and rows[-1]["decision"] == "failed"


@pytest.mark.parametrize("name", sorted(ADB_SPELLINGS))
async def test_adb_parse_failure_quotes_nothing(name, make_bridge):
    canned = {"dumpsys location": ADB_SPELLINGS[name], "cat /proc/uptime": "100.0 50.0\n"}
    server = FakeAdbServer(canned).start()
    try:
        bridge = make_bridge(AdbSource(host="127.0.0.1", port=server.port, timeout=10))
        bridge.consents.grant("agent-a", SensorKind.location, Scope.minimal)
        with pytest.raises(SensorError) as e:
            await bridge.handle({"sensor": "location", "scope": "minimal", "policy_tag": "t", "retention": 0},
                                "agent-a")
        assert e.value.code == "malformed_output"
        _assert_clean(e.value, bridge)
    finally:
        server.stop()


FIX = '{"latitude": 47.123456, "longitude": 8.654321, "provider": "gps"}'
TERMUX_SPELLINGS = {
    "fix printed then exit 1": f"echo '{FIX}'; exit 1",
    "fix on stderr then exit 3": f"echo '{FIX}' >&2; exit 3",
    "API_ERROR carrying the fix": """echo '{"API_ERROR": "at 47.123456,8.654321: denied"}'""",
    "API_ERROR no-fix kind carrying it":
        """echo '{"API_ERROR": "Failed to get location 47.123456 8.654321"}'""",
    "fix then garbage": f"echo '{FIX} 47.123456 8.654321 ]['",
    "fix with an out-of-range latitude": """echo '{"latitude": 147.123456, "longitude": 8.654321}'""",
}


@pytest.mark.parametrize("name", sorted(TERMUX_SPELLINGS))
async def test_termux_failure_quotes_nothing(name, tmp_path: Path, make_bridge):
    b = tmp_path / "bin"
    b.mkdir()
    script(b, "termux-location", TERMUX_SPELLINGS[name])
    bridge = make_bridge(TermuxSource(str(b), timeout=10))
    bridge.consents.grant("agent-a", SensorKind.location, Scope.minimal)
    with pytest.raises(SensorError) as e:
        await bridge.handle({"sensor": "location", "scope": "minimal", "policy_tag": "t", "retention": 0},
                            "agent-a")
    assert e.value.code in ("malformed_output", "source_unavailable", "no_reading")
    _assert_clean(e.value, bridge)


async def test_a_source_error_of_any_text_is_replaced(make_bridge):
    """The safety net in the bridge: whatever a source raises, the message is the fixed one for its code."""
    from device_tools.sensors.errors import MalformedOutput, NoReading, SourceUnavailable

    for kind in (MalformedOutput, NoReading, SourceUnavailable, ValueError, KeyError):
        class Leaky:
            name = "leaky"

            async def read(self, sensor, kind=kind):
                raise kind("Location[gps 47.123456,8.654321]")

        bridge = make_bridge(Leaky())
        bridge.consents.grant("agent-a", SensorKind.location, Scope.minimal)
        with pytest.raises(SensorError) as e:
            await bridge.handle({"sensor": "location", "scope": "minimal", "policy_tag": "t"}, "agent-a")
        _assert_clean(e.value, bridge)
