"""A run's time cap bounds the tool call a step is waiting on: it was checked before a call started and after
it ended, so a step calling a slow upstream ran past the cap by that server's own timeout (here: an hour).
Now the call is given only what is left of the run's time: the run ends at the cap, ``time_cap``, the step
recorded as not acted on in time. (The tool here never answers, and the upstream's timeout is an hour: the
run ending at all, with the cap's reason, is the evidence; no time is measured.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import Client
from tests.agent.audit_rows import audit_rows
from tests.agent.phone_policies import act, screen_of
from tests.agent.test_agent_loop import FAST_OPENAI
from tests.device.device_helpers import Answers

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)
STALLING = str(Path(__file__).with_name("stalling_server.py"))
CAP = 3.0


def config(tmp_path, log: Path):
    agent = {"backend": "openai", "openai": FAST_OPENAI, "tools": ["stall__lookup"]}
    stall = {"command": sys.executable, "args": [STALLING], "env": {"STALL_LOG": str(log)}, "timeout": 3600}
    return parse_config({"mcpServers": {"stall": stall}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["device", "agent"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated", "risk_classifier": False}, "agent": agent}},
        source="<test>", base_dir=tmp_path)


async def test_a_tool_call_that_never_answers_ends_at_the_runs_time_cap(tmp_path, openai_env):
    decided: list[str] = []

    def policy(body):
        sid, app, _ = screen_of(body)
        decided.append(sid)
        if len(decided) == 1:
            return json.dumps({"tool": "stall__lookup", "snapshot_id": sid, "arguments": {"query": "rent"}})
        return act("done", sid, text=f"on {app}")

    log = tmp_path / "stall.log"
    openai_env.script("unknown", policy, policy)
    async with running_gateway(config(tmp_path, log)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers("yes")) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "look up my note about rent",
                                                       "max_seconds": CAP})
    run = r.structured_content
    assert log.read_text().splitlines() == ["started"]  # the call was made, once
    assert len(decided) == 1  # and the model was not asked again after it
    assert run["status"] == "time_cap", run
    assert f"time cap of {CAP:g} s" in run["reason"], run["reason"]
    last = run["steps"][-1]
    assert last["tool"] == "stall__lookup" and last["outcome"] == "time_cap", last
    # the call is on the audit log as cancelled (the gateway stopped it), not lost with the step
    rows = audit_rows(tmp_path, "tool, decision, outcome", "client LIKE 'agent:%' AND tool = 'stall__lookup'")
    assert rows == [("stall__lookup", "allow", "cancelled")], rows
