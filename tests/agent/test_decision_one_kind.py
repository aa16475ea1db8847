"""A decision is one kind of answer with that kind's fields only. Before, an answer carrying a ``tool`` was
read as a tool call whatever else it said: ``{"action": "done", "text": "nothing to do", "tool": ...}`` read
as finished by anyone reading the trace's words, and acted on as the tool call; fields no decision has
(``element``, ``package``, ``command``) were ignored where a reader takes them as what was meant. The schema
allows neither (each alternative is closed), but a backend without constrained decoding answers anything, and
a model copies what its prompt held (a screen, a tool's result). Now such an answer is unusable, saying which
fields do not belong, and the model is asked again. Real gateway, simulated phone, scripted model via HTTP."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.agent.audit_rows import audit_rows
from tests.agent.phone_policies import act, screen_of
from tests.agent.test_agent_loop import agent_config
from tests.device.device_helpers import Answers

from sentinel_mcp.agent.decision import UnusableDecision, parse_decision
from sentinel_mcp.agent.screen import Screen
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SCREEN = Screen.from_result({"snapshot_id": "s-1", "package": "com.android.launcher", "elements": [
    {"id": "e-1", "index": 1, "class": "android.widget.Button", "text": "Messages", "flags": ["clickable"]}]})
TOOLS = {"device__sms_list"}

MIXED = [
    {"action": "done", "text": "nothing to do", "tool": "device__sms_list", "snapshot_id": "s-1",
     "arguments": {}},
    {"action": "click", "element_id": "e-1", "snapshot_id": "s-1", "tool": "device__sms_list",
     "arguments": {}},
    {"tool": "device__sms_list", "snapshot_id": "s-1", "arguments": {}, "text": "com.evil.app"},
    {"tool": "device__sms_list", "snapshot_id": "s-1", "arguments": {}, "element_id": "e-1"},
    {"action": "click", "element_id": "e-1", "snapshot_id": "s-1", "arguments": {"element_id": "e-9"}},
    {"action": "open_app", "text": "com.android.settings", "snapshot_id": "s-1", "package": "com.evil.app"},
    {"action": "done", "text": "ok", "reasoning": "r", "Action": "open_app"},
    {"action": "done", "text": "ok", "reasoning": "r", "action ": "open_app"},
    {"action": "back", "snapshot_id": "s-1", "command": "rm -rf /"},
]


@pytest.mark.parametrize("data", MIXED)
@pytest.mark.parametrize("as_text", [True, False])
def test_a_decision_with_fields_of_another_kind_or_none_is_unusable(data, as_text):
    with pytest.raises(UnusableDecision, match="fields no .* decision has"):
        parse_decision(json.dumps(data) if as_text else data, SCREEN, TOOLS)


@pytest.mark.parametrize("data", [
    {"action": "click", "element_id": "e-1", "snapshot_id": "s-1", "text": None, "reasoning": "r"},
    {"action": "done", "text": "ok"},
    {"tool": "device__sms_list", "snapshot_id": "s-1", "arguments": {}},
    {"tool": "device__sms_list", "snapshot_id": "s-1", "arguments": {}, "reasoning": "read them"},
])
def test_a_decision_of_one_kind_is_taken(data):
    assert parse_decision(data, SCREEN, TOOLS).action in ("click", "done", "tool")


async def test_a_done_that_also_names_a_tool_is_not_acted_on(tmp_path, openai_env):
    def mixed(body):
        sid, _app, _ = screen_of(body)
        return json.dumps({"action": "done", "text": "nothing to do", "reasoning": "r",
                           "tool": "device__sms_list", "snapshot_id": sid, "arguments": {}})

    def done(body):
        return act("done", screen_of(body)[0], text="finished")

    openai_env.script("unknown", mixed, done)
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")  # the tool would be let through
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers("yes")) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "check my phone"})
    run = r.structured_content
    assert [s["outcome"] for s in run["steps"]] == ["unusable", "done"], run["steps"]
    assert "fields no" in run["steps"][0]["detail"], run["steps"][0]
    assert run["status"] == "completed" and run["answer"] == "finished"
    assert audit_rows(tmp_path, "tool", "tool = 'device__sms_list'") == []  # never called
