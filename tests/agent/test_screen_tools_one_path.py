"""The screen's actions reach the phone one way: as the loop's screen decisions (the snapshot pinned by the
schema, a typed password redacted everywhere and held to its field). ``sentinel.agent.tools`` names the other
tools the model may call by glob; a config saying ``device__*`` offered ``device__type_text`` and the rest as
plain tools, and a password typed through it was never known as one: kept in clear in the step's arguments
(agent.db, the run's result) and free to go anywhere later. Real gateway, simulated phone, scripted model
behind real HTTP."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.agent.phone_policies import act, element_id, screen_of
from tests.agent.test_agent_loop import agent_config, phone_of
from tests.agent.test_typed_password_redacted import say_yes

from sentinel_mcp.agent.decision import SCREEN_TOOLS
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SECRET = "Hunter2-Secret"


def offered(body) -> list[str]:
    """The tools the agent told the model it may call (its prompt's list)."""
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    listed = text.split("Tools you may call: ", 1)
    return listed[1].split(".", 1)[0].split(", ") if len(listed) == 2 else []


@pytest.mark.parametrize("patterns", [["device__*"], ["*"], ["device__type_text", "device__click"]])
async def test_screen_tools_are_never_plain_tools(tmp_path, openai_env, patterns):
    seen: list[list[str]] = []

    def policy(body):
        sid, app, lines = screen_of(body)
        seen.append(offered(body))
        if app.endswith("nexuslauncher"):
            return act("click", sid, element_id(lines, "text='Bank'"), why="open the bank")
        if len(seen) == 2:  # the password field, through the tool rather than the screen action
            return json.dumps({"tool": "device__type_text", "snapshot_id": sid, "arguments": {
                "element_id": element_id(lines, "password"), "snapshot_id": sid, "text": SECRET}})
        return act("done", sid, text="stopped")

    openai_env.script("unknown", policy, policy, policy)
    async with running_gateway(agent_config(tmp_path, tools=patterns)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": f"open my bank, sign in with {SECRET}"})
            trace = await c.call_tool("agent__agent_trace", {"run_id": r.structured_content["run_id"]})
        sent = [" ".join(cmd) for cmd in phone_of(rt).commands]
    run = r.structured_content
    screen_tools = {f"device__{t}" for t in SCREEN_TOOLS}
    assert seen and not any(screen_tools & set(tools) for tools in seen), seen
    if patterns != ["device__type_text", "device__click"]:
        assert "device__sms_list" in seen[0]  # the other device tools still are
    assert [s["outcome"] for s in run["steps"]] == ["done", "unusable", "done"], run["steps"]
    assert not any(SECRET in c for c in sent), sent
    # no step keeps it (the goal does: never typed into a password field, it is not known as one)
    assert SECRET not in json.dumps(run["steps"])
    assert SECRET not in json.dumps(trace.structured_content["trace"])


def test_the_screen_tools_are_the_ones_screen_actions_call():
    from sentinel_mcp.agent.decision import UI_ACTIONS, Decision, device_call

    called = set()
    for action in UI_ACTIONS:
        if action in ("done", "fail"):
            continue
        decision = Decision(action=action, snapshot_id="s-1", element_id="e-1", text="com.example.app")
        called.add(device_call(decision, "device")[0].tool)
    assert called | {"screen_read"} == set(SCREEN_TOOLS)
