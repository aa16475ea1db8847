"""One requester holds at most half of a source's read slots: the source runs a few reads at once and refuses
the rest, and a sensor that does not answer (termux-sensor waits for the sensor's first event) holds its slot
for the whole command timeout. Before, one principal with consent to four such sensors kept every slot busy
and every other principal's reads were refused (``source_unavailable``) for as long as it liked.

Through the real gateway, the sensors built-in on a Termux source whose termux-sensor is a real subprocess
that answers only when the test lets it (no timing)."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Any

import pytest
from tests.sensors.sensors_support import FIXTURES
from tests.sensors.test_termux_source import script

from device_tools.sensors.bridge import MAX_READS_PER_REQUESTER
from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.read_slots import MAX_CONCURRENT_READS
from device_tools.sensors.server import create_server
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from sentinel_mcp.gateway.upstream import BuiltinTarget

pytestmark = pytest.mark.timeout(90)
SLOW = [SensorKind.motion, SensorKind.compass, SensorKind.ambient_light, SensorKind.barometer]
NAMES = ["ICM45631 Accelerometer", "AK09918 Magnetometer", "TMD3702 Ambient Light", "BMP390 Pressure"]


def stuck_phone(tmp_path: Path) -> tuple[Path, Path, Path]:
    b = tmp_path / "bin"
    b.mkdir()
    started, go = tmp_path / "started", tmp_path / "go"
    started.mkdir()
    listed = '{"sensors": [' + ", ".join(f'"{n}"' for n in NAMES) + "]}"
    script(b, "termux-sensor", f"""
case "$1" in
  -l) echo {shlex.quote(listed)} ;;
  -c) echo '{{}}' ;;
  -s) touch {shlex.quote(str(started))}/$$
      i=0; while [ ! -e {shlex.quote(str(go))} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
      printf '{{"%s": {{"values": [1.0, 2.0, 3.0]}}}}' "$2" ;;
esac""")
    script(b, "termux-location", f"cat {FIXTURES / 'termux_location.json'}")
    return b, started, go


async def test_one_requester_cannot_hold_every_read_slot(tmp_path):
    assert MAX_READS_PER_REQUESTER < MAX_CONCURRENT_READS
    bin_dir, started, go = stuck_phone(tmp_path)
    ctx = BuiltinContext(name="sensors", data_dir=tmp_path / "sensors",
                         settings={"source": "termux", "termux_bin_dir": str(bin_dir),
                                   "command_timeout": 120})
    ctx.data_dir.mkdir()
    principals = [{"name": n, "token": f"{n}-token-0123456789abcdef"} for n in ("agent-a", "agent-b")]
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": [],
                                                          "principals": principals}},
                          source="<test>", base_dir=tmp_path)
    db = SensorDatabase(ctx.data_dir)
    try:
        for kind in SLOW:
            ConsentRegistry(db).grant("agent-a", kind, Scope.minimal)
        ConsentRegistry(db).grant("agent-b", SensorKind.location, Scope.minimal)
    finally:
        db.close()
    async with running_gateway(config) as rt:
        up = rt.manager.add("sn", BuiltinTarget(server=create_server(ctx)))
        assert await up.wait_ready(20), up.last_error

        def read(sensor: SensorKind, who: str) -> Any:
            args = {"sensor": sensor.value, "policy_tag": "slots", "retention": 0}
            return rt.gateway.invoke("sn__sensor_read", args, session_id=f"{who}/1", origin="a2a",
                                     principal=who)

        held = [asyncio.ensure_future(read(kind, "agent-a")) for kind in SLOW]
        for _ in range(1200):  # bounded by count: every read of agent-a is running or has been refused
            if len(list(started.iterdir())) + sum(t.done() for t in held) >= len(SLOW):
                break
            await asyncio.sleep(0.05)
        other = await read(SensorKind.location, "agent-b")
        go.touch()
        outcomes = [(await t).result for t in held]
    assert not other.result.is_error, other.result.content  # another principal is still served
    served = [r for r in outcomes if not r.is_error]
    refused = [r.structured_content["error"] for r in outcomes if r.is_error]
    assert len(served) == MAX_READS_PER_REQUESTER and refused == ["source_unavailable"] * (
        len(SLOW) - MAX_READS_PER_REQUESTER)
