"""A consent that ends while the phone is being read takes the reading with it: consent is checked again when
the reading is back, before it is recorded, kept or returned. Before, a termux-location that took its time
(a GPS fix takes seconds; the command's bound is 15 s) handed the requester the fix it asked for before the
person revoked, and kept it.

Through the real gateway, the sensors built-in on a Termux source whose termux-location is a real subprocess
that answers only when the test lets it (no timing)."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Any

import pytest
from tests.sensors.sensors_support import FIXTURES
from tests.sensors.test_termux_source import script

from device_tools.sensors.audit_log import AuditLog
from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.server import create_server
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from sentinel_mcp.gateway.upstream import BuiltinTarget

pytestmark = pytest.mark.timeout(90)
READ = {"sensor": "location", "scope": "standard", "policy_tag": "location-for-search", "task_id": "t-1",
        "retention": 3600}


def slow_phone(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A termux-location that says it started, then prints the recorded fix once ``go`` exists."""
    b = tmp_path / "bin"
    b.mkdir()
    started, go = tmp_path / "started", tmp_path / "go"
    script(b, "termux-location", f"touch {shlex.quote(str(started))}\n"
                                 f"i=0; while [ ! -e {shlex.quote(str(go))} ] && [ $i -lt 600 ]; do "
                                 "sleep 0.05; i=$((i+1)); done\n"
                                 f"cat {FIXTURES / 'termux_location.json'}")
    return b, started, go


async def appeared(path: Path, done: Any = None) -> None:
    for _ in range(600):  # bounded by count; the command starts within a second
        if path.exists() or (done is not None and done.done()):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path.name} never appeared")


def store(ctx: BuiltinContext) -> SensorDatabase:
    return SensorDatabase(ctx.data_dir)  # the owner's CLI opens the same store beside the gateway


@pytest.mark.parametrize("ending", ["revoked", "narrowed"])
async def test_a_consent_ended_during_the_read_returns_and_keeps_nothing(tmp_path, ending):
    bin_dir, started, go = slow_phone(tmp_path)
    ctx = BuiltinContext(name="sensors", data_dir=tmp_path / "sensors",
                         settings={"source": "termux", "termux_bin_dir": str(bin_dir), "command_timeout": 60})
    ctx.data_dir.mkdir()
    agent = [{"name": "agent-a", "token": "agent-a-token-0123456789abcdef"}]
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": [],
                                                          "principals": agent}},
                          source="<test>", base_dir=tmp_path)
    db = store(ctx)
    try:
        ConsentRegistry(db).grant("agent-a", SensorKind.location, Scope.standard)
        async with running_gateway(config) as rt:
            up = rt.manager.add("sn", BuiltinTarget(server=create_server(ctx)))
            assert await up.wait_ready(20), up.last_error
            call: Any = asyncio.ensure_future(rt.gateway.invoke(
                "sn__sensor_read", READ, session_id="a/1", origin="a2a", principal="agent-a"))
            await appeared(started, call)
            assert not call.done(), call.result()
            if ending == "revoked":
                assert ConsentRegistry(db).revoke("agent-a", SensorKind.location) == 1
            else:  # the person narrows it to the city
                ConsentRegistry(db).grant("agent-a", SensorKind.location, Scope.minimal)
            go.touch()
            outcome = await call
            kept = await rt.gateway.invoke("sn__sensor_retained", {}, session_id="a/1", origin="a2a",
                                           principal="agent-a")
        result = outcome.result
        assert result.is_error and result.structured_content["error"] == "consent_required", result
        assert "payload" not in result.structured_content and "52." not in str(result.content)
        assert kept.result.structured_content["readings"] == []
        assert db.query("SELECT COUNT(*) AS n FROM sensor_readings")[0]["n"] == 0  # not kept at all
        [row] = AuditLog(db).rows()
        assert row["decision"] == "denied" and row["retention"] == 0
    finally:
        db.close()
