"""A run's time cap holds inside a step: it was checked only between steps, so a step waiting on the person
(the device's question, pushed to the caller, or the console inbox for a caller that cannot be asked: up to
120 s) acted when the answer came, however long after the cap. Now a step whose action would start after the
cap does not act: the wait ends at the cap, a late yes is no yes, and the run ends ``time_cap`` saying so.
(The person here answers yes only after the cap has passed; the assertions are on what happened, not on
times.)"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult
from tests.agent.phone_policies import sign_in_to_bank
from tests.agent.test_agent_loop import agent_config, phone_of

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.decision import Answer

pytestmark = pytest.mark.timeout(120)
CAP = 4.0  # seconds: room to reach the bank's Sign in (two model calls, two taps) on a busy machine


class LateYes:
    """The person: says yes to every question, but only after the run's time cap has passed."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def _late(self, what: str) -> None:
        self.asked.append(what)
        await anyio.sleep(CAP + 1.5)

    async def __call__(self, context, params) -> ElicitResult:  # pushed to the agent's own caller
        await self._late(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    async def ask(self, asked):  # the console inbox, for a caller that cannot be asked
        await self._late(asked.questions[0].message)
        return {q.key: Answer(action="accept", content={"confirm": True}, provenance="user")
                for q in asked.questions}


@pytest.mark.parametrize(
    "asked_in, mode", [("the caller", "legacy"), ("the caller", "auto"), ("the console inbox", "legacy")]
)
async def test_a_step_answered_after_the_time_cap_does_not_act(tmp_path, openai_env, asked_in, mode):
    openai_env.script("unknown", sign_in_to_bank, sign_in_to_bank, sign_in_to_bank)
    person = LateYes()
    async with running_gateway(agent_config(tmp_path)) as rt:
        if asked_in == "the console inbox":
            rt.gateway.person_inbox = person
            client = Client(rt.front.server, mode=mode)  # no elicitation: its questions go to the inbox
        else:
            client = Client(rt.front.server, mode=mode, elicitation_callback=person)
        async with client as c:
            r = await c.call_tool("agent__agent_run", {"goal": "sign in to my bank", "max_seconds": CAP})
        phone = phone_of(rt)
        assert person.asked and "Sign in" in person.asked[0]  # the step reached its question before the cap
        assert phone.screen == "bank_login"  # the late yes did not tap Sign in
    run = r.structured_content
    assert run["status"] == "time_cap", run["reason"]
    assert "did not act" in run["reason"], run["reason"]
    assert run["steps"][-1]["outcome"] == "time_cap" and run["steps"][-1]["tool"] == "device__click"
