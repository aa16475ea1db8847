"""The loop watching itself: a repeated call is not made again, a reflection (then a replan) is injected, and
the
run stops with the reason when that does not help; invented argument values are caught before the call; model
errors are retried with backoff; every reflection is stored with its UTC time and read back with the run."""

from __future__ import annotations

import json
import re

import pytest
from tests.agent.audit_rows import audit_rows
from tests.device.device_helpers import Answers
from mcp import Client
from tests.agent.phone_policies import act, element_id, read_newest_message, screen_of
from tests.agent.test_agent_loop import agent_config, phone_of

from sentinel_mcp.agent.health import HealthMonitor, HealthSettings
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
UTC_ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def context_of(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def tap_phone_until_reflected(body):
    """A model stuck tapping an icon that does nothing, until it reads a reflection; then it does the job."""
    if "Reflection:" in context_of(body):
        return read_newest_message(body)
    sid, _, lines = screen_of(body)
    return act("click", sid, element_id(lines, "text='Phone'"), why="call")


async def test_a_repetition_is_caught_reflected_on_and_the_run_recovers(tmp_path, openai_env):
    openai_env.script("unknown", *[tap_phone_until_reflected] * 6)
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")  # the owner lets its client
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read the newest message"})
            run = r.structured_content
            stored = (await c.call_tool("agent__agent_trace", {"run_id": run["run_id"]})).structured_content
        assert phone_of(rt).screen == "messages_list"
    assert run["status"] == "completed", run
    outcomes = [s["outcome"] for s in run["steps"]]
    assert outcomes == ["done", "reflection", "done", "done"], outcomes
    assert (
        run["steps"][1]["health"]["repetition"] == 0 and "repetition" in run["steps"][1]["health"]["signs"][0]
    )
    assert run["steps"][0]["health"]["score"] == 1
    [reflection] = run["reflections"]
    assert reflection["kind"] == "reflection" and reflection["n"] == 2 and UTC_ISO.match(reflection["at"])
    assert stored["reflections"] == run["reflections"]  # durable: read back from the trace store
    # the repeated tap was never made a second time
    clicks = audit_rows(tmp_path, "tool", "client LIKE 'agent:%' AND tool = 'device__click'")
    assert len(clicks) == 2  # Phone once, Messages once


@pytest.mark.parametrize(
    "invented",
    [
        {"query": "Zebediah"},  # a name nobody mentioned
        {"query": "+44 7700 900123"},  # a number out of thin air
        {
            "query": "Alice",
            "extra": {"to": "mallory@example.com"},
        },  # one grounded value does not carry the rest
    ],
)
async def test_invented_argument_values_are_not_sent_and_a_model_that_insists_is_stopped(
    tmp_path, openai_env, invented
):
    def model(body):
        return json.dumps({"tool": "device__contacts_search", "arguments": invented})

    openai_env.script("unknown", *[model] * 5)
    async with running_gateway(agent_config(tmp_path, tools=["device__contacts_search"])) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            r = await c.call_tool("agent__agent_run", {"goal": "find Alice's phone number"})
    run = r.structured_content
    assert run["status"] == "stuck" and "ungrounded" in run["reason"] and "did not help" in run["reason"], run
    assert [s["outcome"] for s in run["steps"]] == ["reflection", "replan", "stuck"]
    assert [x["kind"] for x in run["reflections"]] == ["reflection", "replan"]
    assert audit_rows(tmp_path, "tool", "tool = 'device__contacts_search'") == []  # never called


async def test_grounded_values_go_ahead_to_the_guard(tmp_path, openai_env):
    def model(body):
        if "result of device__contacts_search" in context_of(body):
            return act("done", screen_of(body)[0], text="found")
        return json.dumps({"tool": "device__contacts_search", "arguments": {"query": "alice"}})

    openai_env.script("unknown", model, model)
    async with running_gateway(agent_config(tmp_path, tools=["device__contacts_search"])) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            r = await c.call_tool("agent__agent_run", {"goal": "find Alice's phone number"})
    run = r.structured_content
    # the call was made (case does not matter: "alice" is in the goal); the guard then wants the person's
    # consent for contacts, and nobody can be asked on this connection
    assert run["reflections"] == [] and run["steps"][0]["health"]["grounding"] == 1, run
    assert run["status"] == "refused" and "consent" in run["reason"]
    assert audit_rows(tmp_path, "tool", "tool = 'device__contacts_search'") != []


async def test_model_errors_are_retried_with_backoff_and_recorded(tmp_path, openai_env):
    openai_env.script(
        "unknown",
        {"status": 500},
        {"status": 500},
        {"status": 500},
        {"status": 500},
        read_newest_message,
        read_newest_message,
    )
    config = agent_config(tmp_path, health={"backoff_seconds": 0.01})
    async with running_gateway(config) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")  # the owner lets its client
        async with Client(rt.front.server, mode="legacy") as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read the newest message"})
    run = r.structured_content
    assert run["status"] == "completed", run
    assert [x["kind"] for x in run["reflections"]][:1] == ["retry"] and "model error" in run["reflections"][
        0
    ]["signs"][0]


def test_cycles_and_repeats_score_low_and_the_settings_are_bounded():
    m = HealthMonitor(HealthSettings())
    a, b = ("device__scroll", {"direction": "up"}), ("device__scroll", {"direction": "down"})
    for i, (name, args) in enumerate([a, b, a]):
        h = m.assess(snapshot=f"s-{i}", name=name, arguments=args, seconds=0.1, grounds="", tool_call=False)
        assert h.score == 1
        m.acted(f"s-{i}", name, args)
    h = m.assess(snapshot="s-9", name=b[0], arguments=b[1], seconds=0.1, grounds="", tool_call=False)
    assert h.repetition == 0.2 and "cycle of 2" in h.signs[0]
    slow = m.assess(
        snapshot="s-x", name="device__press_back", arguments={}, seconds=300, grounds="", tool_call=False
    )
    assert slow.latency == 0.1 and slow.signs[0].startswith("slow")
    from pydantic import ValidationError

    for bad in ({"threshold": 2}, {"recoveries": 99}, {"nope": 1}):
        with pytest.raises(ValidationError):
            HealthSettings.model_validate(bad)
