"""One decision log, read as one: ``sentinel-mcp audit --decision ID`` shows the gateway's rows of a decision
and
what the device firewall and the sensors recorded inside it (their records point to it by ``decision_id``)."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.cli import main
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR
from tests.device.device_helpers import Answers, element, snapshot_id

pytestmark = pytest.mark.timeout(120)
READ = {"sensor": "location", "scope": "minimal", "policy_tag": "location-for-search", "task_id": "t-1"}


async def say_yes(ctx, params) -> ElicitResult:  # noqa: ANN001
    if "confirm" in (params.requested_schema.get("properties") or {}):
        return await Answers("yes")(ctx, params)
    return ElicitResult(action="accept", content={"allow": True})


class Shown:
    def __init__(self, returncode: int, stdout: str) -> None:
        self.returncode, self.stdout = returncode, stdout


def audit(capsys, cfg, *args: str) -> Shown:  # noqa: ANN001
    """``sentinel-mcp -c CFG audit ...`` in this process (the CLI's own entry point)."""
    code = main(["-c", str(cfg), "audit", "--tail", "200", *args])
    return Shown(code, capsys.readouterr().out)


def test_a_decision_shows_the_device_and_sensor_records_inside_it(tmp_path, capsys):
    cfg = tmp_path / "sentinel.json"
    signed, read = anyio.run(calls, tmp_path, cfg)
    assert not signed.is_error and not read.is_error, (signed.content, read.content)
    tap, sensed = signed.meta["sentinel/decision_id"], read.meta["sentinel/decision_id"]

    shown = audit(capsys, cfg, "--decision", tap, "--json")
    assert shown.returncode == 0, shown.stdout
    rows = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    assert {r["tool"] for r in rows if "tool" in r} == {"device__click"}
    device = [r for r in rows if r.get("area") == "device"]
    assert [r["outcome"] for r in device] == ["approved", "allowed"]
    assert all(r["decision_id"] == tap for r in rows)

    shown = audit(capsys, cfg, "--decision", sensed, "--json")
    rows = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    [sensor] = [r for r in rows if r.get("area") == "sensors"]
    assert sensor["decision"] == "allowed" and sensor["sensor"] == "location"

    table = audit(capsys, cfg, "--decision", tap)
    assert table.returncode == 0 and "device   allowed" in table.stdout, table.stdout
    unknown = audit(capsys, cfg, "--decision", "0" * 32)
    assert unknown.returncode == 1 and "no decision" in unknown.stdout


async def calls(tmp_path, cfg):  # noqa: ANN001, ANN201
    """A risky tap the user confirms and a sensor read the user consents to, through the gateway."""
    data = {
        "mcpServers": {},
        "sentinel": {
            "data_dir": str(tmp_path / "state"),
            "builtins": ["device", "sensors"],
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
            "device": {"backend": "simulated", "risk_classifier": False},
        },
    }
    cfg.write_text(json.dumps(data))
    async with running_gateway(parse_config(data, source=str(cfg), base_dir=tmp_path)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            home = await c.call_tool("device__screen_read", {})
            bank = await c.call_tool(
                "device__click",
                {"element_id": element(home, text="Bank")["id"], "snapshot_id": snapshot_id(home)},
            )
            signed = await c.call_tool(
                "device__click",
                {"element_id": element(bank, text="Sign in")["id"], "snapshot_id": snapshot_id(bank)},
            )
            read = await c.call_tool("sensors__sensor_read", READ)
    return signed, read
