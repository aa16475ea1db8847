"""What Sentinel's own tools and the CLI do with a policy guard: symbolic queries, the facts summary,
binding contexts, answering askables, and "why not" for a tool call."""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, Field

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny
from sentinel_mcp.core.given_fact_size import size_problem
from sentinel_mcp.core.lazy_proof import rendered_proof
from sentinel_mcp.policy.answered_askable import judging_askable
from sentinel_mcp.policy.caller_reach import withholding_for
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.kept_effects import kept_names
from sentinel_mcp.policy.questions import AnswerRefused, question_of
from sentinel_mcp.policy.read_guards import CallerReads, looked_call
from sentinel_mcp.policy.solver import FetchFilter, SolverResult
from sentinel_mcp.policy.version_readers import proof_without_version, reads_rulebase
from sentinel_mcp.policy.withheld_facts import (
    NOTHING_HIDDEN,
    WITHHELD_WHY,
    Hidden,
    Withholding,
    tells_unseen,
    unseen_values,
)


class QueryOutcome(BaseModel):
    status: str  # proved | failed | blocked | error | refused | time_limit | memory_limit
    goal: str
    solutions: list[dict[str, Any]] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    error: str | None = None


class PolicyService:
    def __init__(self, guard: PolicyGuard, principal: str | None = None) -> None:
        """``principal``: whom the answers are for (a client's); None is the device owner at the CLI. What a
        principal's answers show and fetch is limited to the tools it may reach and the personal data it has
        consented to (``withheld_facts.py``), and, of the reads the rulebase guards, to those it may make
        itself (``read_guards.py``)."""
        self.guard = guard
        self.principal = principal
        self.withholding = withholding_for(guard.withheld, guard.port, principal)
        self._reads: dict[str, CallerReads] = {}

    def _caller_reads(self, session: str) -> CallerReads | None:
        """This principal's reads of guarded tools in ``session`` (None: the owner at the CLI reads all)."""
        if self.principal is None:
            return None
        if session not in self._reads:
            self._reads[session] = self.guard.reads_of(self.principal, session)
        return self._reads[session]

    def _may_fetch(self, session: str) -> FetchFilter | None:
        """What the solver may fetch for this principal's look: tools in its reach whose personal data it has
        consented to, and of guarded reads, those its call of the tool would be allowed."""
        withholding, reads = self.withholding, self._caller_reads(session)
        if withholding is None and reads is None:
            return None

        async def refusal(tool: str, arguments: dict[str, Any]) -> str | None:
            why = withholding.fetch_refusal(tool) if withholding is not None else None
            return why or (await reads.refusal(tool, arguments) if reads is not None else None)

        return refusal

    async def _hidden(self, session: str) -> Hidden:
        reads = self._caller_reads(session)
        if self.withholding is None and reads is None:
            return NOTHING_HIDDEN
        facts = await self.guard.store.valid(session)
        unread = await reads.hidden(facts) if reads is not None else frozenset()
        # what writes of every conversation kept (kept_effects.py) decides calls, and is no principal's to see
        kept = kept_names(self._rb.info.options)
        if self.withholding is None:
            return kept, frozenset(), unread
        preds, tools, unread = self.withholding.hidden(facts, unread)
        return preds | kept, tools, unread

    @property
    def _rb(self):  # noqa: ANN202
        if not self.guard.rulebases.loaded:
            raise RuntimeError(f"no rulebase is loaded ({self.guard.load_error or 'none configured'})")
        return self.guard.rulebases.current

    async def query(self, session: str, goal: str) -> QueryOutcome:
        """Prove a symbolic goal typed by a client (contexts resolved), fetching what bindings can establish.

        The goal runs in a query worker process (``query_worker.py``), checked against the allow list and
        bounded in time, inferences and memory; never in the engine that decides tool calls."""
        rb = self._rb
        g = self.guard
        mod = await g.knowledge.ensure(session, rb)
        goal = goal.strip().rstrip(".")

        hidden: Hidden = NOTHING_HIDDEN

        async def dump() -> str:
            return await g.engine.dump_session(mod, *hidden)

        async def one_pass() -> dict[str, Any]:
            nonlocal hidden
            await g.knowledge.ensure(session, rb)
            hidden = await self._hidden(session)
            # the worker's copy is keyed by what it leaves out too (a consent given or revoked changes it)
            return await g.queries.query(
                rb_module=rb.module, rb_version=rb.version, rb_files=rb.files, session_module=mod,
                generation=(g.knowledge.generation.get(session, 0), hidden), dump_session=dump,
                goal=goal, principal=self.principal or "")  # its time read when its turn comes

        res = await self._solve(one_pass, rb, session)
        return _query_outcome(goal, res)

    async def _solve(self, one_pass: Any, rb: Any, session: str) -> Any:
        """The solver's passes until the goal is decided, bounded by the guard's time limit; what it fetches
        is this caller's to see (``_may_fetch``)."""
        g = self.guard
        deadline = time.monotonic() + g.settings.guard_timeout
        may_fetch = self._may_fetch(session)
        return await g.solver.solve(one_pass, rb, session, deadline=deadline, may_fetch=may_fetch)

    async def summary(self, session: str) -> str:
        rb = self._rb
        await self.guard.knowledge.ensure(session, rb)
        answered = {f.predicate for f in await self.guard.store.valid(session)}
        open_q = [
            f"{a.predicate}/{a.arity}: {a.question} ({_type_text(a.type)}; "
            f"answerable by {', '.join(a.from_)})"
            for a in rb.info.askables
            if a.predicate not in answered
        ]
        hidden = await self._hidden(session)
        text = await self.guard.store.summary(session, open_q, shows=lambda f: Withholding.shows(f, hidden))
        if stale := await self._stale_contexts(rb, session, await self.guard.store.contexts(session)):
            text += (
                "\nBound, but their check does not hold now (a guard or a query reads them as unbound; "
                "bind again with sentinel_bind): " + ", ".join(stale)
            )
        if rb.info.contexts:
            text += "\nDeclared contexts: " + ", ".join(rb.info.contexts)
        return text

    async def bind(self, session: str, name: str, value: Any) -> dict[str, Any]:
        """Bind a context after proving its check (the solver fetches what the check needs)."""
        rb = self._rb
        g = self.guard
        if name not in rb.info.contexts:
            raise ValueError(f"unknown context {name!r}; declared: {', '.join(rb.info.contexts) or 'none'}")
        if (too_large := size_problem(value, "the value")) is not None:
            raise ValueError(f"cannot bind {name}: {too_large}")
        res = await self._context_check(rb, session, name, value)
        if res is None:
            raise ValueError(
                f"cannot bind {name} to {value!r}: its check does not hold, or reads facts this caller may "
                "not see (personal data it has no consent for, or a tool outside its reach)"
            )
        if res.status != "proved":
            why = (
                "; ".join(res.unmet) or "; ".join(m["fact"] for m in res.missing) or "its check does not hold"
            )
            raise ValueError(f"cannot bind {name} to {value!r}: {why}")
        removed = await g.knowledge.bind_context(session, name, value)
        return {
            "context": name,
            "value": value,
            "invalidated": removed,
            "proof": Withholding.proof(res.tree, await self._hidden(session)),
        }

    async def _context_check(self, rb: Any, session: str, name: str, value: Any) -> SolverResult | None:
        """The proof of ``name``'s check for ``value`` (the solver fetches what it needs); None when its
        outcome may rest on facts this caller may not see (``_may_rest_on_withheld``)."""
        g = self.guard
        mod = await g.knowledge.ensure(session, rb)

        async def one_pass() -> dict[str, Any]:
            return await g.engine.context_check(
                rb.module, mod, process_clock.now(), name, value, rb.info.inference_limit(g.inference_limit)
            )

        res = await self._solve(one_pass, rb, session)
        return None if self._may_rest_on_withheld(rb, session, res, await self._hidden(session)) else res

    async def _stale_contexts(self, rb: Any, session: str, contexts: dict[str, Any]) -> list[str]:
        """The bound contexts whose check does not hold now (or may rest on what this caller may not see):
        as for a guard or a query, such a binding gives its name no value."""
        stale = []
        for name, value in contexts.items():
            if name in rb.info.contexts:
                res = await self._context_check(rb, session, name, value)
                if res is None or res.status != "proved":
                    stale.append(name)
        return stale

    def _may_rest_on_withheld(self, rb: Any, session: str, res: SolverResult, hidden: Hidden) -> bool:
        """Whether a bind's outcome may depend on a fact this caller may not see, so that telling it apart
        would say whether the fact exists and what it holds (one bit per try). Then every such outcome is one
        refusal: a fetch refused for want of consent or reach (the fact is absent), a proof through a withheld
        predicate or a fact of a read it may not make (present and true), or any failure while withheld facts
        are in the session (present and false)."""
        if self.withholding is None and self.principal is None:
            return False
        w = self.withholding
        reads = self._caller_reads(session)

        def withholds(tool: Any) -> bool:
            return (w is not None and w.withholds(tool)) or (reads is not None and reads.guards(tool))

        withheld = {b.predicate for b in rb.info.bindings if w is not None and w.withholds(b.tool)}
        withheld |= set(hidden[0])
        if any(withholds(m.get("tool")) for m in res.missing):
            return True
        if res.status == "proved":
            shown = json.dumps(res.tree, default=str)  # a string mentioning one errs on the side of refusing
            return any(f"{p}(" in shown for p in withheld) or any(f in shown for f in hidden[2])
        return any(hidden)

    async def answer(
        self, session: str, predicate: str, inputs: list[Any], value: Any, provenance: str = "agent",
        principal: str | None = None,
    ) -> str:
        """Answer an askable (provenance ``agent`` from the LLM); inputs may name bound contexts.

        Only a declared askable can be answered this way; Sentinel's internal facts (``$confirmed``, ...) are
        never writable by a tool, whatever the rulebase declares."""
        rb = self._rb
        if not isinstance(predicate, str) or predicate.startswith("$"):
            raise AnswerRefused(f"{predicate!r} is internal to Sentinel and cannot be answered")
        contexts = await self.guard.store.contexts(session)
        used = [i for i in inputs if isinstance(i, str) and i in contexts and i in rb.info.contexts]
        # a context names its value only while its check holds, as in a guard or a query (bound_contexts.pl)
        if stale := await self._stale_contexts(rb, session, {n: contexts[n] for n in dict.fromkeys(used)}):
            raise AnswerRefused(
                f"the context {stale[0]} is bound, but its check does not hold now (or reads facts this "
                "caller may not see), so it names no value: bind it again with sentinel_bind"
            )
        resolved = [contexts[i] if isinstance(i, str) and i in used else i for i in inputs]
        ask = await judging_askable(self.guard.engine, rb, predicate, resolved)
        need = {
            "kind": "ask",
            "predicate": predicate,
            "inputs": resolved,
            "type": ask.type,
            "from": ask.from_,
            "question": ask.question,
            "fact": f"{predicate}{tuple(resolved)}",
        }
        q = question_of(need, None, rb.version)
        return await self.guard.store_answer(
            session,
            q,
            Answer(action="accept", content={"answer": value}, provenance=provenance),  # type: ignore[arg-type]
            contexts=used,
            principal=principal,
        )

    async def why_not(self, session: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """What a call would need: the decision, its proof or what is missing and which questions remain.

        A tool this caller may not reach is as unknown to it as when called; the facts the decision needs are
        fetched only from tools this caller may read itself (the others' needs stay unmet)."""
        port = self.guard.port
        if self.withholding is not None and not self.withholding.reachable(tool):
            raise RuntimeError(f"unknown tool {tool!r}")
        if port is not None:  # judged on what the call would be judged on: its schema's defaults filled, ...
            arguments, problem = await port.judged_arguments(tool, arguments)
            if problem is not None:
                return {"tool": tool, "decision": "deny", "reason": problem}
        call = looked_call(port, tool, arguments, session, self.principal)
        # asking uses nothing up
        d = await self.guard.decide(call, spend=False, may_fetch=self._may_fetch(session))
        hidden = await self._hidden(session)
        out: dict[str, Any] = {"tool": tool, "decision": d.kind, "reason": d.reason}
        if isinstance(d, Allow):
            out["proof"] = Withholding.proof(await rendered_proof(d.proof), hidden)
            if not reads_rulebase(port, self.principal):  # the version is the rulebase's readers' to see
                out["proof"] = proof_without_version(out["proof"])
        elif isinstance(d, Deny):
            out |= {"unmet": d.unmet, "how_to_unblock": d.how_to_unblock}
        elif isinstance(d, Ask):
            out["questions"] = [
                {
                    "key": q.key,
                    "question": q.message,
                    "schema": q.requested_schema,
                    "predicate": q.meta.get("predicate"),
                    "inputs": q.meta.get("inputs"),
                    "may_answer": q.meta.get("from"),
                }
                for q in d.questions
            ]
        # the decision is made on every fact of the session: what it says may hold a value only facts withheld
        # from this caller hold (an order's owner, read to find it is not the user's); then it says only that
        unseen = unseen_values(await self.guard.store.valid(session), hidden, arguments)
        if tells_unseen(out, unseen):
            return {"tool": tool, "decision": d.kind, "reason": WITHHELD_WHY}
        return out


def _type_text(t: Any) -> str:
    """An askable's answer type as the facts summary shows it (rulebase.AskableInfo.type: a name, a fixed
    ``choice``, or a ``choice_of`` whose values the rulebase finds when it asks)."""
    if not isinstance(t, dict):
        return str(t)
    choice = t.get("choice")
    if isinstance(choice, list):
        return f"one of {', '.join(str(c) for c in choice)}"
    if "choice_of" in t:
        return "one of the values the rulebase finds when it asks"
    return "a choice"


def _query_outcome(goal: str, res: SolverResult) -> QueryOutcome:
    return QueryOutcome(
        status=res.status,
        goal=goal,
        solutions=res.solutions,
        questions=[str(q.get("question")) for q in res.questions],
        missing=[f"{m['fact']} (via {m['tool']}: {m.get('error') or 'not fetched'})" for m in res.missing],
        error=res.error,
    )
