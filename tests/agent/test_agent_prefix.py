"""The agent names tools by identity: under another prefix the device's screen tools and the configured tool
globs still find their tools, and Sentinel's own tools stay out of its reach whatever prefix exposes them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.agent.loop import AgentLoop, allowed_tool
from sentinel_mcp.agent.settings import AgentSettings
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.tool_ref import ToolRef
from tests.agent.audit_rows import audit_rows
from tests.agent.phone_policies import read_newest_message
from tests.agent.test_agent_loop import agent_config
from tests.device.device_helpers import Answers

pytestmark = pytest.mark.timeout(120)


def _expose(rt: Any, **prefixes: str) -> None:
    """Serve built-ins under other prefixes, as a configured server's ``prefix`` does."""
    for name, prefix in prefixes.items():
        rt.manager.upstreams[name].target.prefix = prefix
    rt.manager.catalog.rebuild(rt.manager.upstreams.values())


async def test_under_another_device_prefix_the_agent_acts_without_reconfiguring(tmp_path, openai_env):
    told: list[str] = []

    def first(body: dict[str, Any]) -> str:
        told.append(body["messages"][1]["content"])
        return read_newest_message(body)

    openai_env.script("unknown", first, read_newest_message)
    async with running_gateway(agent_config(tmp_path)) as rt:
        _expose(rt, device="phone")
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")  # the owner lets its client
        assert rt.gateway.find_tool("device__click") is not None  # by identity
        assert rt.catalog_health.route("device__click") is None  # no longer an exposed name
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "open Messages and read the newest message"})
    run = r.structured_content
    assert run["status"] == "completed" and run["answer"] == "Alice: See you at 7?", run
    assert run["steps"][0]["tool"] == "phone__click"
    # the default globs (device__sms_list, ...) named the read tools by identity: listed as exposed now
    assert "phone__sms_list" in told[0] and "device__sms_list" not in told[0]
    rows = audit_rows(tmp_path, "tool, decision", "client LIKE 'agent:%'")
    assert ("phone__screen_read", "allow") in rows and ("phone__click", "allow") in rows
    assert not [t for t, _ in rows if t.startswith("device__")]


@pytest.mark.parametrize("patterns", [["*"], ["*__*"], ["bot__*", "hq__*", "relay__*"], ["*agent_run"]])
async def test_sentinels_own_tools_stay_out_of_reach_under_any_prefix(tmp_path, patterns):
    config = agent_config(tmp_path)
    config.sentinel.builtins += ["a2a", "sentinel"]
    async with running_gateway(config) as rt:
        _expose(rt, agent="bot", sentinel="hq", a2a="relay")
        settings = AgentSettings(tools=patterns)
        listed = AgentLoop(rt.gateway, backend=None, store=None, settings=settings).tools()  # type: ignore[arg-type]
        exposed = {t.name for t in rt.gateway.list_catalog_tools()}
        assert {"bot__agent_run", "hq__sentinel_answer"} <= exposed
        assert not [n for n in listed if n.split("__")[0] in ("bot", "hq", "relay")], listed
        if patterns[0] in ("*", "*__*"):
            assert "phone__sms_list" not in listed and "device__sms_list" in listed  # the device's are its


@pytest.mark.parametrize(
    "name, ref, allowed",
    [
        ("phone__sms_list", ToolRef("device", "sms_list"), True),  # identity matches, exposed name does not
        ("device__sms_list", ToolRef("evil", "sms_list"), False),  # exposed like the device's, but not it
        ("device__sms_list", None, False),  # a name the catalog does not know
        ("x__agent_run", ToolRef("agent", "agent_run"), False),  # forbidden by identity
        ("agent__anything", ToolRef("notes", "anything"), False),  # forbidden by the name exposing it
        ("relay__a2a_send", ToolRef("a2a", "a2a_send"), False),
        ("s__sensor_consent", ToolRef("sensors", "sensor_consent"), False),
    ],
)
def test_globs_match_identities(name, ref, allowed):
    assert allowed_tool(name, ref, ["device__*", "notes__*", "a2a__*", "agent__*", "sensors__*"]) is allowed


def test_a_screen_action_names_the_device_tool_by_identity():
    from sentinel_mcp.agent.decision import Decision, device_call

    ref, args = device_call(Decision(action="click", snapshot_id="s-1", element_id="e-1"), "phone-a")
    assert (ref.server, ref.tool, args) == ("phone-a", "click", {"element_id": "e-1", "snapshot_id": "s-1"})
    assert json.loads(json.dumps({"tool": ref}))["tool"] == "phone-a__click"  # still a plain name on the wire
