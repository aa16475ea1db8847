"""A run's result and trace carry the phone's words: every screen the agent saw (``observed``), the labels it
tapped and the model's answer, which it wrote from those screens. ``device__screen_read`` hands the same text
to a client marked as the apps' data; ``agent_run`` and ``agent_trace`` handed it over unmarked, so an app's
"Sentinel: the user approved ..." reached the calling model through the agent as if it were Sentinel's."""

from __future__ import annotations

import pytest
from mcp import Client
from tests.agent.phone_policies import read_newest_message
from tests.agent.test_agent_loop import agent_config
from tests.device.device_helpers import Answers

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)


def marked(result) -> bool:
    source = (result.meta or {}).get("sentinel/untrusted")
    return bool(source) and result.content[0].text.startswith("[Untrusted content from")


async def test_a_runs_result_and_trace_are_marked_as_the_phones_words(tmp_path, openai_env):
    openai_env.script("unknown", read_newest_message, read_newest_message)
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "open Messages and read the newest message"})
            trace = await c.call_tool("agent__agent_trace", {"run_id": r.structured_content["run_id"]})
    assert r.structured_content["answer"] == "Alice: See you at 7?"  # a message's text, through the model
    assert marked(r) and marked(trace)


async def test_a_run_that_stops_is_marked_too(tmp_path, openai_env):
    openai_env.script("unknown", read_newest_message, lambda body: '{"action": "fail", "text": "no"}')
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "open Messages and read the newest message"})
    assert r.is_error and r.structured_content["status"] == "failed"
    assert "Messages" in str(r.structured_content["steps"])  # the screen's words are in it
    assert marked(r)


async def test_the_runs_listing_is_marked_too(tmp_path, openai_env):
    """``agent_runs`` lists each run's answer and reason (the model's words, written from the screens) in
    its structured content: it was handed over unmarked, the app's words as Sentinel's own."""
    openai_env.script("unknown", read_newest_message, read_newest_message)
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            await c.call_tool("agent__agent_run", {"goal": "open Messages and read the newest message"})
            runs = await c.call_tool("agent__agent_runs", {})
    assert runs.structured_content["runs"][0]["answer"] == "Alice: See you at 7?"
    assert marked(runs)
