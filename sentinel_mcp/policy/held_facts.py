"""The policy guard's facts as the console sees them (``core.session_facts.SessionFacts``): read from the fact
store, revoked from the engine's loaded session and the store together."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.knowledge import Knowledge


class HeldFacts:
    def __init__(self, store: FactStore, knowledge: Knowledge) -> None:
        self.store = store
        self.knowledge = knowledge

    async def sessions(self) -> list[str]:
        return await self.store.sessions()

    async def count(self, session: str) -> int:
        return await self.store.count(session)

    async def valid(self, session: str) -> list[Fact]:
        return await self.store.valid(session)

    async def contexts(self, session: str) -> dict[str, Any]:
        return await self.store.contexts(session)

    async def revoke(self, session: str, fact: str) -> bool:
        # only a fact the session holds, by its exact text: the engine's invalidate takes a pattern, and a
        # pattern ("seen(_)") must not retract more from the engine than the store forgets
        if fact not in {f.fact for f in await self.store.valid(session)}:
            return False
        await self.knowledge.invalidate(session, fact)  # the engine's mirror, when the session is loaded
        await self.store.delete(session, [fact])
        return True
