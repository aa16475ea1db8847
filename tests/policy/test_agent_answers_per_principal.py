"""The agent's answers (``sentinel_answer``) are bounded per conversation (``max_agent_answers``) and per
principal across all their conversations (``max_principal_agent_answers``): a client opening conversation
after conversation, each filled to its bound, grew the fact store without end. Past the principal's bound a
new answer is refused in any conversation of theirs, saying so; another principal is not touched; answers
that lapse (or go with their conversation's purge) make room again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.policy.agent_answer_bound import forget_owners
from tests.policy.test_goal_containment import airline_config

pytestmark = pytest.mark.timeout(180)
PER_CONVERSATION, PER_PRINCIPAL = 4, 10


async def _answer(gw: Any, who: str, session: str, i: int) -> tuple[bool, str]:
    args = {"predicate": "compensation_reason", "inputs": [f"R{i:04d}"], "answer": "delayed_flight"}
    out = await gw.run(CallRequest("sentinel__sentinel_answer", args, session, "test", "client",
                                   principal=Principal(who, "token")))
    out = getattr(out, "result", None) or out
    content = getattr(out, "content", None)
    text = content[0].text if content else str(getattr(out, "reason", out))
    return bool(getattr(out, "is_error", False) or content is None), text


async def test_a_principal_cannot_spread_agent_answers_over_many_conversations(tmp_path: Path) -> None:
    async with running_gateway(airline_config(tmp_path)) as rt:
        guard = rt.gateway.guard
        guard.max_agent_answers, guard.max_principal_agent_answers = PER_CONVERSATION, PER_PRINCIPAL
        taken = 0
        outcomes = []
        for n in range(6):  # 6 conversations x 4 answers offered: 10 taken in all
            for i in range(PER_CONVERSATION):
                refused, text = await _answer(rt.gateway, "alice", f"alice/c{n}", n * 10 + i)
                outcomes.append(refused)
                taken += not refused
                if refused:
                    assert "this principal's conversations hold 10 answers" in text, text
        assert taken == PER_PRINCIPAL and outcomes == [False] * PER_PRINCIPAL + [True] * 14, outcomes
        # the conversation's own bound still holds first
        refused, text = await _answer(rt.gateway, "bob", "bob/c0", 1)
        assert not refused, text
        for i in range(2, 2 + PER_CONVERSATION):
            refused, text = await _answer(rt.gateway, "bob", "bob/c0", i)
        assert refused and "this conversation holds 4" in text, text
        # another principal's answers are theirs: bob answers in a new conversation of his
        refused, text = await _answer(rt.gateway, "bob", "bob/c1", 50)
        assert not refused, text
        await guard.store._learning.settled()
        held = 0
        for session in await guard.store.sessions():
            held += sum(f.provenance == "agent" for f in await guard.store.valid(session))
        assert held == PER_PRINCIPAL + PER_CONVERSATION + 1
        # answers gone (a conversation's facts deleted) make room again
        gone = [f.fact for f in await guard.store.valid("alice/c0") if f.provenance == "agent"]
        await guard.knowledge.delete("alice/c0", gone)
        # the purge forgets whose conversation alice/c0 was (it holds no agent answer now), and no other
        assert await forget_owners(guard.store) == 1
        assert await forget_owners(guard.store) == 0
        refused, text = await _answer(rt.gateway, "alice", "alice/c9", 99)
        assert not refused, text
