"""The policy's questions about facts the gateway put to a caller, by conversation and key: the person's
answer counts when it comes back even if the call's decision no longer asks the question.

A question open to the user and the agent (``from([user, agent])``) can be answered by the agent through
``sentinel_answer`` while the user's form is open. The retry's decision, made on the agent's answer, then
asked nothing, and the user's answer was dropped unread: the agent's yes decided the call against the user's
no. The user's word wins (``answer_facts.keep_answer``), so the answer the user gave to a question asked of
this conversation, and not recorded yet, is recorded (``ask_rounds.decide_with_answers``), and the call
decided again. Only the keys the round asked reach here (a 2026-era state names them, sealed; a 2025-era
push holds them), and only the policy's questions about facts (``kind`` ``ask``): a confirmation answers only
the text it showed. Bounded per principal, the oldest forgotten first (then the answer is dropped as before).
With replicas of a shared store, what one asked is remembered for all (``shared_asked_questions.py``): the
user's answer may come back through another.
"""

from __future__ import annotations

from collections import OrderedDict

from sentinel_mcp.core.decision import Question
from sentinel_mcp.gateway.shared_asked_questions import SharedAskedQuestions

PER_PRINCIPAL = 256  # questions remembered for one principal (its oldest go first: never another's)
MAX_PRINCIPALS = 1024  # principals remembered (the config names them; a bound all the same)
OUR_PREFIX = "sentinel."  # input_rounds.py: a 2026-era round's keys carry it, the questions' own may not


class AskedQuestions:
    """Per principal (the config names them, so their number is bounded): one principal's many conversations
    never push another's questions out."""

    def __init__(self, per_principal: int = PER_PRINCIPAL) -> None:
        self.per_principal = per_principal
        self._asked: dict[str, OrderedDict[tuple[str, str], Question]] = {}
        # replicas: the cluster's, in place of this process's memory (its faults raise: the call is refused)
        self.shared: SharedAskedQuestions | None = None

    async def remember(self, principal: str, session: str, questions: list[Question]) -> None:
        asked = [(q.key.removeprefix(OUR_PREFIX), q) for q in questions if q.meta.get("kind") == "ask"]
        if self.shared is not None:
            await self.shared.remember(principal, session, asked)
            return
        for qkey, q in asked:
            held = self._asked.setdefault(principal, OrderedDict())
            while len(self._asked) > MAX_PRINCIPALS:
                del self._asked[next(iter(self._asked))]
            key = (session, qkey)
            held[key] = q
            held.move_to_end(key)
            while len(held) > self.per_principal:
                held.popitem(last=False)

    async def forget(self, principal: str, session: str, key: str) -> None:
        """An answer to the question was recorded: a later round carrying it again (a 2025-era call's
        answers add up round after round) does not record it again."""
        qkey = key.removeprefix(OUR_PREFIX)
        if self.shared is not None:
            await self.shared.forget(principal, session, qkey)
            return
        held = self._asked.get(principal)
        if held is not None:
            held.pop((session, qkey), None)

    async def get(self, principal: str, session: str, key: str) -> Question | None:
        qkey = key.removeprefix(OUR_PREFIX)
        if self.shared is not None:  # the cluster's: asked through any replica, answered through any
            return await self.shared.get(principal, session, qkey)
        held = self._asked.get(principal)
        return None if held is None else held.get((session, qkey))
