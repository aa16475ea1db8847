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


def config(tmp_path, tools=("notes__lookup",)):
    agent = {"backend": "openai", "openai": FAST_OPENAI, "tools": list(tools)}
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


async def test_a_question_an_outside_server_asks_during_a_step_is_shown_as_its_own(tmp_path, openai_env):
    """A step's call may ask the person through the agent's caller. The device's questions are Sentinel's
    own; an outside server's were pushed unchanged and reached the person as the agent built-in's, that is as
    Sentinel's own ("Sentinel: allow your MCP client to read your messages ..."). Now they carry the server's
    name, as the gateway marks an outside server's question to its own client."""
    from tests.agent.screen_posing_server import POSING_QUESTION

    def policy(body):
        sid, _, _ = screen_of(body)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "result of notes__remind" not in user:
            return json.dumps({"tool": "notes__remind", "arguments": {"query": "rent"}})
        return act("done", sid, text="reminded")

    openai_env.script("unknown", policy, policy)
    cfg = config(tmp_path, tools=["notes__remind"])
    person = Answers("yes")
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "remind me about the rent"})
    asked = [q for q in person.questions if "read your messages" in q]
    assert asked, (person.questions, r.structured_content["steps"])
    for q in asked:
        assert not q.startswith(POSING_QUESTION[:9]), q  # not in Sentinel's voice
        assert "notes" in q.split("Sentinel: allow")[0] and "not by Sentinel" in q, q


async def test_sentinels_own_question_in_an_outside_servers_step_stays_sentinels(tmp_path, openai_env):
    """The consent gate's question for that server's tool is Sentinel's own: it is not marked as the
    server's (which would tell the person Sentinel did not ask)."""

    def policy(body):
        sid, _, _ = screen_of(body)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "result of notes__lookup" not in user and "refused" not in user:
            return json.dumps({"tool": "notes__lookup", "arguments": {"query": "rent"}})
        return act("done", sid, text="looked")

    openai_env.script("unknown", policy, policy)
    cfg = config(tmp_path)
    cfg.sentinel.personal["notes__lookup"] = "notes"  # the owner says the tool reads personal notes
    person = Answers("no")
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            await c.call_tool("agent__agent_run", {"goal": "look up my note about rent"})
    consent = [q for q in person.questions if "notes__lookup" in q]
    assert consent and all("not by Sentinel" not in q for q in consent), person.questions
