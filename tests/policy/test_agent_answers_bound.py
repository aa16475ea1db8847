"""What an agent may write into a conversation through ``sentinel_answer`` is bounded. An askable the agent
may answer (airline's ``compensation_reason(R, W)``, ``from([user, agent])``) covers every reservation id, so
each answer naming a new one was a new fact, kept for the whole conversation: a client wrote facts without end
(each up to 16,000 characters) into the store and into the session the shared engine thread loads for every
decision. Past ``max_agent_answers`` standing agent answers a new one is refused, saying so; the same answer
again still changes nothing, and the conversation's other facts are untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.policy.test_goal_containment import airline_config

pytestmark = pytest.mark.timeout(180)
CAP = 12


def _answer(i: int, spelled: str = "R{:04d}") -> dict:
    return {"predicate": "compensation_reason", "inputs": [spelled.format(i)], "answer": "delayed_flight"}


@pytest.mark.parametrize("spelled", ["R{:04d}", "{:04d}é" + "z" * 300, "r-{:d}'\\\""])
async def test_agent_answers_past_the_bound_are_refused(tmp_path: Path, spelled: str) -> None:
    async with running_gateway(airline_config(tmp_path)) as rt:
        guard = rt.gateway.guard
        guard.max_agent_answers = CAP
        async with Client(rt.front.server, mode="legacy") as c:
            for i in range(CAP):
                r = await c.call_tool("sentinel__sentinel_answer", _answer(i, spelled))
                assert not r.is_error, r.content[0].text
            refused = []
            for i in range(CAP, CAP + 8):
                r = await c.call_tool("sentinel__sentinel_answer", _answer(i, spelled))
                refused.append(r.is_error)
                assert "answers the agent gave" in r.content[0].text, r.content[0].text
            assert refused == [True] * 8
            # the same answer again changes nothing, and is no new fact: not refused
            again = await c.call_tool("sentinel__sentinel_answer", _answer(3, spelled))
            assert not again.is_error, again.content[0].text
            # an answer of another predicate counts toward the same bound
            other = await c.call_tool("sentinel__sentinel_answer",
                                      {"predicate": "compensation_reservation", "inputs": ["mia_li_3668"],
                                       "answer": "i_dont_know"})
            assert other.is_error and "answers the agent gave" in other.content[0].text
            await guard.store._learning.settled()
            sessions = await guard.store.sessions()
            assert len(sessions) == 1
            held = [f for f in await guard.store.valid(sessions[0]) if f.provenance == "agent"]
            assert len(held) == CAP, [f.fact for f in held]
            # a seed and the conversation's other facts stand
            assert any(f.fact.startswith("current_user(") for f in await guard.store.valid(sessions[0]))
