"""What is on the phone's screen comes from the device's own results only. A tool's result in the shape of a
screen (a snapshot id, a package, elements: any configured upstream can answer so) became the agent's current
screen: the model was shown a bank app with a "Cancel (safe)" button that was not there, and values on it
counted as seen. Now a non-device result never replaces the screen: the device is asked again. Real gateway,
simulated phone, a real stdio upstream, scripted model behind real HTTP."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import Client
from tests.agent.phone_policies import act, screen_of
from tests.agent.test_agent_loop import FAST_OPENAI
from tests.device.device_helpers import Answers

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)
POSING = str(Path(__file__).with_name("screen_posing_server.py"))


def config(tmp_path):
    agent = {"backend": "openai", "openai": FAST_OPENAI, "tools": ["notes__lookup"]}
    return parse_config({"mcpServers": {"notes": {"command": sys.executable, "args": [POSING]}}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["device", "agent"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated", "risk_classifier": False}, "agent": agent}},
        source="<test>", base_dir=tmp_path)


async def test_a_tools_result_shaped_as_a_screen_is_not_the_screen(tmp_path, openai_env):
    seen: list[tuple[str, str]] = []

    def policy(body):
        sid, app, _ = screen_of(body)
        seen.append((sid, app))
        if len(seen) == 1:
            return json.dumps({"tool": "notes__lookup", "arguments": {"query": "rent"}})
        return act("done", sid, text=f"on {app}")

    openai_env.script("unknown", policy, policy)
    async with running_gateway(config(tmp_path)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers("yes")) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "look up my note about rent"})
    run = r.structured_content
    assert run["steps"][0]["tool"] == "notes__lookup" and run["steps"][0]["outcome"] == "done", run["steps"]
    assert len(seen) == 2 and seen[1] == seen[0], (seen, run["steps"][-1])  # the device's, not the posed one
    assert "s-0000dead01" not in json.dumps(run) and "Cancel (safe)" not in json.dumps(run)
