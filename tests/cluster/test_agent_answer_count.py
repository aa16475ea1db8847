"""The count of a conversation's standing agent answers (``agent_answer_bound.standing_agent_answers``) on
each backend: only the agent's, only unexpired, only that conversation's, and never past the bound asked."""

from __future__ import annotations

import time

from sentinel_mcp.policy.agent_answer_bound import standing_agent_answers
from sentinel_mcp.policy.fact_store import Fact, FactStore


def _fact(session: str, n: int, provenance: str = "agent", ttl: float | None = None) -> Fact:
    return Fact(session=session, predicate="cancel_reason", args=[f"R{n}", "health"],
                fact=f"cancel_reason('R{n}',health)", provenance=provenance,  # type: ignore[arg-type]
                expires_at=None if ttl is None else time.time() + ttl)


async def test_standing_agent_answers_are_counted_up_to_the_bound(store_location: str) -> None:
    store = await FactStore(store_location).open()
    try:
        await store.add([_fact("s", n) for n in range(7)])
        await store.add([_fact("s", n, ttl=-1) for n in range(10, 14)])  # expired: not counted
        await store.add([_fact("s", n, provenance="user") for n in range(20, 23)])
        await store.add([_fact("s", n, provenance="observed", ttl=60) for n in range(30, 33)])
        await store.add([_fact("other", n) for n in range(40, 49)])  # another conversation's
        assert await standing_agent_answers(store, "s", 100) == 7
        assert await standing_agent_answers(store, "s", 5) == 5  # counted no further than asked
        assert await standing_agent_answers(store, "other", 100) == 9
        assert await standing_agent_answers(store, "nobody", 100) == 0
    finally:
        await store.close()
