"""The policy guard's facts as the console sees them (``core.session_facts.SessionFacts``): read from the fact
store, revoked from the engine's loaded session and the store together.

A view for a principal shows what that principal's own ``sentinel_facts`` would: facts read from personal data
it has no consent for, or from tools outside its reach, are left out of the listing, the count and what it may
revoke (revoking by exact text would otherwise tell whether such a fact is there); a recorded proof that may
rest on such facts is withheld as its ``sentinel_why_not`` withholds one."""

from __future__ import annotations

from typing import Any, Callable, Iterable

from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.read_guards import CallerReads
from sentinel_mcp.policy.withheld_facts import NOTHING_HIDDEN, TOLD_KEYS, WITHHELD_PROOF, Hidden, Withholding


class HeldFacts:
    def __init__(
        self, store: FactStore, knowledge: Knowledge, withholding: Withholding | None = None,
        bindings: Callable[[], Iterable[tuple[str, str]]] = lambda: (),
        reads: Callable[[str], CallerReads] | None = None,
        guarded: Callable[[str], bool] = lambda tool: False,
    ) -> None:
        self.store = store
        self.knowledge = knowledge
        self.withholding = withholding  # None: everything (the owner at the CLI)
        self.bindings = bindings  # the rulebase in force's (predicate, tool) bindings
        # session -> the principal's reads of guarded tools there (None: the owner reads all); ``guarded``:
        # whether the rulebase guards a read tool (``read_guards.py``)
        self.reads = reads
        self.guarded = guarded

    @property
    def _everything(self) -> bool:
        return self.withholding is None and self.reads is None

    async def _hidden(self, session: str, facts: list[Fact]) -> Hidden:
        unread = await self.reads(session).hidden(facts) if self.reads is not None else frozenset()
        if self.withholding is None:
            return NOTHING_HIDDEN[0], NOTHING_HIDDEN[1], unread
        return self.withholding.hidden(facts, unread)

    async def sessions(self) -> list[str]:
        return await self.store.sessions()

    async def count(self, session: str) -> int:
        if self._everything:
            return await self.store.count(session)
        return len(await self.valid(session))

    async def valid(self, session: str) -> list[Fact]:
        facts = await self.store.valid(session)
        if self._everything:
            return facts
        hidden = await self._hidden(session, facts)
        return [f for f in facts if Withholding.shows(f, hidden)]

    async def contexts(self, session: str) -> dict[str, Any]:
        return await self.store.contexts(session)

    async def revoke(self, session: str, fact: str) -> bool:
        # only a fact the session holds and this view shows, by its exact text: the engine's invalidate takes
        # a pattern, and a pattern ("seen(_)") must not retract more from the engine than the store forgets
        if fact not in {f.fact for f in await self.valid(session)}:
            return False
        await self.knowledge.delete(session, [fact])  # the engine's mirror (when loaded) and the store
        return True

    async def shown_proof(self, session: str, proof: Any) -> Any:
        """A recorded decision's proof as this view may show it: whole, or, when it may rest on withheld
        facts, withheld as ``sentinel_why_not`` withholds one (what the decision told its caller stays)."""
        if self._everything or not isinstance(proof, dict):
            return proof
        hidden = await self._hidden(session, await self.store.valid(session))
        w = self.withholding or Withholding(None, "")
        if not w.rests_on_withheld(proof, hidden, self.bindings(), self.guarded):
            return proof
        return {k: proof[k] for k in TOLD_KEYS if k in proof} | WITHHELD_PROOF
