"""What a completed call teaches the policy guard (``PolicyGuard.observe``): the facts of a bound read tool's
result, the rulebase's effects of a write, and the confirmation of that very call spent (one confirmation, one
call). A base of ``PolicyGuard``, which sets the attributes named here.
"""

from __future__ import annotations

from typing import Any, Callable

from mcp_types import CallToolResult, TextContent

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE, indicator, kept_predicates
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.prolog_text import quote_atom
from sentinel_mcp.policy.rulebase import RulebaseHolder
from sentinel_mcp.policy.solver import Solver


# what observe_unknown passes to observe: no result came, so nothing is learnt from one
# (Sentinel's own error: never an upstream's "not found", Solver.store_error)
_UNKNOWN = CallToolResult(content=[TextContent(type="text", text="no result (its outcome is unknown)")],
                          is_error=True, _meta={"sentinel/error": "outcome_unknown"})


class ObserveStep:
    rulebases: RulebaseHolder
    store: FactStore
    knowledge: Knowledge
    engine: PrologEngine
    solver: Solver
    private: Callable[[str], bool] | None

    def is_read_only(self, name: str) -> bool:
        raise NotImplementedError  # PolicyGuard's: the rulebase's declaration or the tool's annotation

    def _teaches(self, call: ToolCall, result: CallToolResult, rb: Any) -> tuple[bool, bool]:
        """Whether the result is a bound read's answer (a read tool a binding names: facts to learn, or, an
        error, to unlearn) and whether it has effects to apply."""
        identity = call.identity
        reads = rb.info.binds(identity) and self.is_read_only(identity)
        return reads, not result.is_error and rb.info.has_effect(identity)

    def observes(self, call: ToolCall, result: CallToolResult) -> bool:
        """False when ``observe`` would return at once: no rulebase loaded, or nothing to learn or apply and
        no confirmation that could be held for the call (``_may_hold_confirmation``)."""
        rb = self.rulebases.active
        if rb is None:
            return False
        return any(self._teaches(call, result, rb)) or self._may_hold_confirmation(call)

    def _may_hold_confirmation(self, call: ToolCall) -> bool:
        """False when no confirmation this process wrote or read names the tool and the session's mirror or
        this process's own store is where one would be (``confirmed_tools.py``): nothing to spend."""
        session = call.session_id
        return self.store.confirmed_tools.may_name(call.identity) or not (
            self.knowledge.is_loaded(session) or (self.private is not None and self.private(session))
        )

    async def observe_unknown(self, call: ToolCall) -> None:
        """A forwarded call whose result never came (timed out, cancelled, its connection lost) may have
        run: its confirmation is spent (one confirmation, one call), a read's earlier facts are taken back,
        what a write's effects would change is no longer known (invalidated: the guard asks the upstream
        again), and what they would establish is recorded as unsure (``'$unsure'(Fact)``): it may have
        happened, so it denies where it would (a second "only once" write is refused even by a store whose
        status did not change), and it may not have, so it never grants (sentinel_core.pl's unsure_fact)."""
        await self.observe(call, _UNKNOWN)  # as an error: the confirmation spent, a read's facts taken back
        if not self.rulebases.loaded:
            return
        rb = self.rulebases.current
        if not rb.info.has_effect(call.identity):
            return
        await self.knowledge.ensure(call.session_id, rb)
        actions = await self._invalidated(call, rb)
        await self._establish(call, actions["establish"], unsure=True)

    async def _establish(self, call: ToolCall, texts: list[str], unsure: bool = False) -> None:
        """Record what the write established, as observed facts of this session; a fact of a kept
        predicate for every session (kept_effects.py). ``unsure``: the write may not have run
        (``'$unsure'(Fact)``), kept in this session only: an unsure fact denies every call whose guard reads
        its predicate, and nothing clears it, so kept it would stop that tool for every conversation for
        good."""
        kept = frozenset() if unsure else kept_predicates(self.rulebases.current.info.options)
        own: list[Fact] = []
        shared: list[Fact] = []
        for text in texts:
            scope = call.session_id
            if kept:
                plain = await self.knowledge.fact_of_text(scope, text, "observed")
                if indicator(plain.predicate, plain.args) in kept:
                    scope = KEPT_SCOPE
            fact = await self.knowledge.fact_of_text(
                scope, f"'$unsure'({text})" if unsure else text, "observed",
                source_tool=call.identity, source_digest=call.digest,
            )
            (shared if scope == KEPT_SCOPE else own).append(fact)
        await self.knowledge.add(own)
        await self.knowledge.keep(shared)

    async def _invalidated(self, call: ToolCall, rb: Any) -> dict[str, list[str]]:
        """The write's effects (their ``invalidate`` actions done, their ``establish`` texts returned)."""
        session = call.session_id
        actions = await self.engine.effect_actions(
            rb.module, self.knowledge.module(session), call.identity, call.arguments, process_clock.now()
        )
        for pattern in actions["invalidate"]:
            await self.knowledge.invalidate(session, pattern, rb)
        return actions

    async def observe(self, call: ToolCall, result: CallToolResult) -> None:
        """After a call ran: learn facts from a read tool's result, apply the rulebase's effects, and
        consume the confirmation of this exact call (one confirmation, one call)."""
        if not self.rulebases.loaded:
            return
        rb = self.rulebases.current
        identity = call.identity
        session = call.session_id
        learns, effects = self._teaches(call, result, rb)
        if not effects and not self.knowledge.is_loaded(session):
            # the decision did not load the session, and nothing is to be applied: its mirror is needed only
            # to spend a confirmation of this very call, if the store holds one. Loading (and seeding: a
            # write) a session just to learn facts was the largest cost of a read in a fresh conversation (one
            # per 2026-era call) and pushed live sessions out of the engine; the facts go to the store, and
            # into the mirror with the rest when the session is next loaded
            mirrored = self._may_hold_confirmation(call) and await self.store.has_confirmation(
                session, identity, call.digest
            )
        elif not learns and not effects and not self._may_hold_confirmation(call):
            return  # nothing to learn or apply, and no confirmation held for this very call
        else:
            mirrored = True
        if mirrored:
            await self.knowledge.ensure(session, rb)
            if self.store.confirmed_tools.may_name(identity):  # else the mirror holds none of this tool's
                await self.knowledge.invalidate(
                    session, f"'$confirmed'({quote_atom(identity)}, {quote_atom(call.digest)}, _, _, _)"
                )
        if result.is_error:
            if learns:  # a read answered with an error: what it said before no longer holds, or "not found"
                await self.solver.store_error(rb, session, identity, call.arguments, result)
            return
        if learns:  # into the store, and into the mirror when the session is loaded
            await self.solver.store_result(rb, session, identity, call.arguments, result)
        if effects:
            actions = await self._invalidated(call, rb)
            # what the write did, as an observed fact of this session (e.g. "reservation R was cancelled")
            await self._establish(call, actions["establish"])
