"""What Sentinel's own tools and the CLI do with a policy guard: symbolic queries, the facts summary,
binding contexts, answering askables, and "why not" for a tool call."""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, Field

from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall
from sentinel_mcp.core.lazy_proof import rendered_proof
from sentinel_mcp.policy.caller_reach import withholding_for
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.questions import AnswerRefused, question_of
from sentinel_mcp.policy.solver import FetchFilter, SolverResult
from sentinel_mcp.policy.withheld_facts import Withholding


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
        consented to (``withheld_facts.py``)."""
        self.guard = guard
        self.withholding = withholding_for(guard.withheld, guard.port, principal)

    @property
    def _may_fetch(self) -> FetchFilter | None:
        return self.withholding.fetch_refusal if self.withholding is not None else None

    async def _hidden(self, session: str) -> tuple[frozenset[str], frozenset[str]]:
        if self.withholding is None:
            return frozenset(), frozenset()
        return self.withholding.hidden(await self.guard.store.valid(session))

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

        hidden: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())

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
                now=time.time(), goal=goal)

        res = await self._solve(one_pass, rb, session)
        return _query_outcome(goal, res)

    async def _solve(self, one_pass: Any, rb: Any, session: str) -> Any:
        """The solver's passes until the goal is decided, bounded by the guard's time limit; what it fetches
        is this caller's to see (``_may_fetch``)."""
        g = self.guard
        deadline = time.monotonic() + g.settings.guard_timeout
        return await g.solver.solve(one_pass, rb, session, deadline=deadline, may_fetch=self._may_fetch)

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
        if rb.info.contexts:
            text += "\nDeclared contexts: " + ", ".join(rb.info.contexts)
        return text

    async def bind(self, session: str, name: str, value: Any) -> dict[str, Any]:
        """Bind a context after proving its check (the solver fetches what the check needs)."""
        rb = self._rb
        g = self.guard
        if name not in rb.info.contexts:
            raise ValueError(f"unknown context {name!r}; declared: {', '.join(rb.info.contexts) or 'none'}")
        mod = await g.knowledge.ensure(session, rb)

        async def one_pass() -> dict[str, Any]:
            return await g.engine.context_check(
                rb.module, mod, time.time(), name, value, rb.info.inference_limit(g.inference_limit)
            )

        res = await self._solve(one_pass, rb, session)
        hidden = await self._hidden(session)
        if self._may_rest_on_withheld(rb, res, hidden):
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

    def _may_rest_on_withheld(
        self, rb: Any, res: SolverResult, hidden: tuple[frozenset[str], frozenset[str]]
    ) -> bool:
        """Whether a bind's outcome may depend on a fact this caller may not see, so that telling it apart
        would say whether the fact exists and what it holds (one bit per try). Then every such outcome is one
        refusal: a fetch refused for want of consent or reach (the fact is absent), a proof through a withheld
        predicate (present and true), or any failure while withheld facts are in the session (present and
        false)."""
        if self.withholding is None:
            return False
        withheld = {b.predicate for b in rb.info.bindings if self.withholding.withholds(b.tool)}
        withheld |= set(hidden[0])
        if any(self.withholding.withholds(m.get("tool")) for m in res.missing):
            return True
        if res.status == "proved":
            shown = json.dumps(res.tree, default=str)  # a string mentioning one errs on the side of refusing
            return any(f"{p}(" in shown for p in withheld)
        return bool(hidden[0] or hidden[1])

    async def answer(
        self, session: str, predicate: str, inputs: list[Any], value: Any, provenance: str = "agent"
    ) -> str:
        """Answer an askable (provenance ``agent`` from the LLM); inputs may name bound contexts.

        Only a declared askable can be answered this way; Sentinel's internal facts (``$confirmed``, ...) are
        never writable by a tool, whatever the rulebase declares."""
        rb = self._rb
        if not isinstance(predicate, str) or predicate.startswith("$"):
            raise AnswerRefused(f"{predicate!r} is internal to Sentinel and cannot be answered")
        ask = next((a for a in rb.info.askables if a.predicate == predicate), None)
        if ask is None:
            raise AnswerRefused(
                f"{predicate} is not askable; askables: " + ", ".join(a.predicate for a in rb.info.askables)
            )
        contexts = await self.guard.store.contexts(session)
        used = [i for i in inputs if isinstance(i, str) and i in contexts and i in rb.info.contexts]
        resolved = [contexts[i] if isinstance(i, str) and i in used else i for i in inputs]
        expected = ask.arity if ask.type == "yes_no" else ask.arity - 1
        if len(resolved) != expected:
            raise AnswerRefused(f"{predicate} takes {expected} input argument(s), got {len(resolved)}")
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
        )

    async def why_not(self, session: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """What a call would need: the decision, its proof or what is missing and which questions remain.

        A tool this caller may not reach is as unknown to it as when called; the facts the decision needs are
        fetched only from tools this caller may read itself (the others' needs stay unmet)."""
        port = self.guard.port
        if self.withholding is not None and not self.withholding.reachable(tool):
            raise RuntimeError(f"unknown tool {tool!r}")
        t = port.find_tool(tool) if port is not None else None
        ann = t.annotations if t else None
        server, _, own = tool.partition("__")
        ref = port.identity_of(tool) if port is not None else None
        if ref is not None:  # the tool's identity, whatever prefix exposes it (rules bind to it)
            server, own = ref.server, ref.tool
        call = ToolCall(
            name=tool,
            server=server if own else "",
            tool=own or tool,
            arguments=arguments,
            session_id=session,
            origin="builtin",
            read_only=ann.read_only_hint if ann else None,
            destructive=ann.destructive_hint if ann else None,
            self_confirming=port.self_confirming(tool) if port is not None else False,
        )
        d = await self.guard.decide(call, spend=False, may_fetch=self._may_fetch)  # asking uses nothing up
        out: dict[str, Any] = {"tool": tool, "decision": d.kind, "reason": d.reason}
        if isinstance(d, Allow):
            out["proof"] = Withholding.proof(await rendered_proof(d.proof), await self._hidden(session))
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
