"""Consents are per purpose, and a run's steps are its caller's calls: they state the purpose the caller
stated for ``agent_run``. A step stated none, so a client saying "ads" read the Messages screen on the
consent the person gave for calls stating no purpose (or for another purpose), and its questions named no
purpose. Real gateway, simulated phone, scripted model behind real HTTP."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.agent.phone_policies import read_newest_message
from tests.agent.test_agent_loop import agent_config
from tests.device.device_helpers import Answers

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.quoted_values import readable_text

pytestmark = pytest.mark.timeout(120)
BODY = "See you at 7"  # the newest message, on the Messages screen


def model_saw(openai_env) -> str:
    return "".join(m["content"] for call in openai_env.calls() for m in call["body"]["messages"])


@pytest.mark.parametrize("granted, stated", [
    ("unspecified", "ads"),  # a consent for calls stating none
    ("reading my messages", "ads"),  # a consent for another purpose
    ("reading my messages", "Reading my messages"),  # purposes are compared as written
])
async def test_a_runs_steps_do_not_use_a_consent_for_another_purpose(tmp_path, openai_env, granted, stated):
    openai_env.script("unknown", read_newest_message, read_newest_message, read_newest_message)
    declines = Answers()  # no to every question: a consent asked for the stated purpose is not given
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", granted, by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=declines) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read the newest message"},
                                  meta={"sentinel/purpose": stated})
    run = r.structured_content
    assert BODY not in model_saw(openai_env) and BODY not in str(run), run
    said = readable_text(stated)  # the client's word, quoted as every question's values are
    assert any(f"(purpose: {said})" in q for q in declines.questions), declines.questions


async def test_a_runs_steps_use_the_consent_for_the_stated_purpose(tmp_path, openai_env):
    openai_env.script("unknown", read_newest_message, read_newest_message)
    answers = Answers()
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", "reading my messages", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answers) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read the newest message"},
                                  meta={"sentinel/purpose": "reading my messages"})
    run = r.structured_content
    assert run["status"] == "completed" and BODY in run["answer"], run
    assert answers.questions == []


async def test_a_trace_read_for_another_purpose_hides_it_and_keeps_it(tmp_path, openai_env):
    """The trace's readers see what a run read of a kind while their caller holds consent for it for the
    purpose the read states; a read stating another purpose took it out on disk for good, though the person's
    consent (for the first purpose) still held. Now it is left out of that answer only; a revocation still
    takes it off the disk (test_trace_consent)."""
    from tests.agent.test_trace_consent import on_disk

    openai_env.script("unknown", read_newest_message, read_newest_message)
    mine, ads = {"sentinel/purpose": "reading my messages"}, {"sentinel/purpose": "ads"}
    async with running_gateway(agent_config(tmp_path)) as rt:
        book = rt.gateway.consent_gate.book
        book.grant("owner", "messages", "reading my messages", by="cli")
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read the newest message"}, meta=mine)
            run_id = r.structured_content["run_id"]
            other = await c.call_tool("agent__agent_trace", {"run_id": run_id}, meta=ads)
            listed = await c.call_tool("agent__agent_runs", {}, meta=ads)
            kept = on_disk(tmp_path)
            again = await c.call_tool("agent__agent_trace", {"run_id": run_id}, meta=mine)
            book.revoke("owner", "messages", by="cli")
            gone = await c.call_tool("agent__agent_trace", {"run_id": run_id}, meta=mine)
    for hidden in (other, listed):
        assert BODY not in json.dumps(hidden.structured_content) + hidden.content[0].text
    assert "withheld" in json.dumps(other.structured_content)
    assert BODY in kept and BODY in json.dumps(again.structured_content)  # still on disk, still shown
    assert BODY not in json.dumps(gone.structured_content) and BODY not in on_disk(tmp_path)
