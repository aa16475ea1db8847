"""A run's trace keeps the personal screens it saw (the Messages list, the answer read from it) only while its
principal still holds the consent: once revoked, agent_trace, agent_runs and the file on disk no longer hold
them. Real gateway, simulated phone, scripted model behind a real HTTP endpoint."""

from __future__ import annotations

import json
import sqlite3

import pytest
from mcp import Client
from tests.agent.phone_policies import act, read_newest_message, screen_of
from tests.agent.test_agent_loop import agent_config
from tests.device.device_helpers import Answers

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SECRET = "See you at 7"  # the newest message's body, on the Messages screen


def on_disk(tmp_path) -> str:
    """Everything the agent's trace file holds, as text."""
    db = sqlite3.connect(tmp_path / "agent" / "agent.db")
    try:
        rows = [*db.execute("SELECT * FROM agent_runs"), *db.execute("SELECT * FROM agent_steps"),
                *db.execute("SELECT * FROM agent_reflections")]
    finally:
        db.close()
    return json.dumps(rows, default=str)


async def test_a_revoked_consent_takes_the_personal_screens_out_of_the_trace(tmp_path, openai_env):
    openai_env.script("unknown", read_newest_message, read_newest_message)
    async with running_gateway(agent_config(tmp_path)) as rt:
        book = rt.gateway.consent_gate.book
        book.grant("owner", "messages", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            ran = await c.call_tool("agent__agent_run", {"goal": "read the newest message"})
            run = ran.structured_content
            assert run["status"] == "completed" and SECRET in run["answer"]
            held = await c.call_tool("agent__agent_trace", {"run_id": run["run_id"]})
            assert SECRET in json.dumps(held.structured_content)  # still consented: the owner sees it
            book.revoke("owner", "messages", by="cli")
            trace = await c.call_tool("agent__agent_trace", {"run_id": run["run_id"]})
            runs = await c.call_tool("agent__agent_runs", {})
    for result in (trace, runs):
        shown = json.dumps(result.structured_content) + "".join(b.text for b in result.content)
        assert SECRET not in shown and "Alice" not in shown
    assert trace.structured_content["status"] == "completed"  # what happened stays, not what was read
    assert "messages" in json.dumps(trace.structured_content["trace"])  # which kind took it out is said
    assert SECRET not in on_disk(tmp_path) and "Alice" not in on_disk(tmp_path)


async def test_a_personal_tools_result_is_taken_out_with_its_consent(tmp_path, openai_env):
    """A run that read sms_list (a tool declaring its kind) keeps the answer it wrote from it only while the
    caller holds the messages consent."""

    def read_sms(body):
        return json.dumps({"tool": "device__sms_list", "arguments": {"limit": 1}})

    def report(body):
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return act("done", screen_of(body)[0], text=SECRET if SECRET in user else "nothing read")

    openai_env.script("unknown", read_sms, report)
    async with running_gateway(agent_config(tmp_path, tools=["device__sms_list"])) as rt:
        book = rt.gateway.consent_gate.book
        book.grant("owner", "messages", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            ran = await c.call_tool("agent__agent_run", {"goal": "read my newest SMS"})
            run = ran.structured_content
            assert run["status"] == "completed" and run["answer"] == SECRET, ran.content[0].text
            book.revoke("owner", "messages", by="cli")
            trace = await c.call_tool("agent__agent_trace", {"run_id": run["run_id"]})
    assert SECRET not in json.dumps(trace.structured_content) and SECRET not in on_disk(tmp_path)
