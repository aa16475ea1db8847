"""The policy guard's answers kept: an accepted answer to one of its questions stored as a fact of the
conversation (a base of ``PolicyGuard``, which sets these attributes).
"""

from __future__ import annotations

import asyncio

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Answer, Guard, Question, ToolCall
from sentinel_mcp.policy.answer_facts import answer_fact, keep_answer
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.questions import AnswerRefused
from sentinel_mcp.policy.rulebase import RulebaseHolder


class AnswerStore:
    """``PolicyGuard``'s ``record_answer`` and ``store_answer``."""

    default: Guard
    rulebases: RulebaseHolder
    knowledge: Knowledge
    settings: PolicySettings
    _answering: asyncio.Lock
    max_agent_answers: int
    max_principal_agent_answers: int

    async def record_answer(self, call: ToolCall, question: Question, answer: Answer) -> None:
        """Store an accepted answer. A confirmation is stored only for JSON ``true``: a "no" (false, decline,
        cancel) ends the call that asked and is not remembered, so the next identical call asks again."""
        kind = question.meta.get("kind")
        if kind == "confirmation":  # the default guard's own question
            await self.default.record_answer(call, question, answer)
            return
        if kind not in ("ask", "confirm") or answer.action != "accept":
            return  # a cancelled or declined question establishes nothing
        # a confirmation names the tool by its identity (what rules bind to), whatever name exposed it
        if kind == "confirm" and (
            question.meta.get("tool") != call.identity or question.meta.get("digest") != call.digest
        ):
            raise AnswerRefused("this confirmation was asked for another call")
        await self.store_answer(call.session_id, question, answer, principal=call.principal)

    async def store_answer(self, session: str, question: Question, answer: Answer,
                           contexts: list[str] | None = None, principal: str | None = None) -> str:
        """Store an answer as a fact with the answer's provenance; returns the fact text."""
        rb = self.rulebases.current
        await self.knowledge.ensure(session, rb)
        async with self._answering:  # the check for an earlier answer and the store, one answer at a time
            fact = await answer_fact(
                self.knowledge, rb, session, question, answer, confirm_ttl=self.settings.confirm_ttl,
                contexts=contexts,
            )
            if fact is None:
                return "nothing stored: the confirmation was not given"
            return (await keep_answer(self.knowledge, question, fact, self.max_agent_answers, principal,
                                      self.max_principal_agent_answers)).fact
