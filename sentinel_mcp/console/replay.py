"""What-if replay: decide recorded calls again under a candidate rulebase, and list the decisions that change.

What a replay can reproduce, and what it cannot (said on every report):

- Each recorded call is decided twice in a sandbox (a scratch fact store; the live one is only read): under
the
  rulebase in force now (the *baseline*) and under the candidate. Both see the same data: the session's facts
  still valid in the live store, plus the facts the recorded proof names (with the provenance they had then),
  plus the seeds. No tool is called: a fact that was neither stored nor in the proof is *missing* in both.
- A call counts as *reproduced* when the baseline decides it as it was recorded; only reproduced calls can
  report a change (candidate differs from the record). The others are listed as not reproducible (their facts
  expired, an answer given then is not on record, the policy changed since), never as changes.
- A recorded ``allow`` that followed a confirmation is replayed with that confirmation given again (the record
  shows the user approved); other answers count only when they are facts in the proof.
- Tools neither rulebase governs go to the same default policy both times: unchanged by construction, skipped.
- The consent gate, arguments the audit redacted, and upstream answers are outside a replay.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sentinel_mcp.core.record_bounds import was_cut
from sentinel_mcp.console.proof_view import facts_with_provenance, proof_nodes
from sentinel_mcp.core.decision import Allow, Answer, Ask, Decision, Deny, ToolCall
from sentinel_mcp.gateway.catalog_health import CatalogHealth

MAX_CALLS = 300
REPLAYED_ORIGINS = ("client", "a2a", "cli")
LIMITS = (
    "what a replay reproduces: the facts still stored and those named in each recorded proof, the seeds, "
    "and confirmations given then; no tool is called, so a fact neither stored nor in the proof is missing "
    "under both rulebases. Calls the current rulebase does not decide as recorded are listed as not "
    "reproducible, not as changes. The consent gate and redacted arguments are outside a replay."
)


@dataclass
class Replayed:
    row: dict[str, Any]
    recorded: str
    baseline: str
    candidate: str
    baseline_reason: str
    candidate_reason: str
    baseline_proof: Any
    candidate_proof: Any

    @property
    def reproduced(self) -> bool:
        return self.baseline == self.recorded

    @property
    def changed(self) -> bool:
        return self.reproduced and self.candidate != self.recorded


@dataclass
class ReplayReport:
    current_version: str
    candidate_version: str
    examined: int = 0
    skipped_default: int = 0  # decided by the default policy under both rulebases
    skipped_other: list[str] = field(default_factory=list)
    results: list[Replayed] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the candidate did not load
    limits: str = LIMITS
    # why the replay could not finish (out of time or memory in its process): then nothing else is shown,
    # never what was decided so far as if it were the whole
    unfinished: str = ""

    @property
    def changes(self) -> list[Replayed]:
        return [r for r in self.results if r.changed]

    @property
    def unreproducible(self) -> list[Replayed]:
        return [r for r in self.results if not r.reproduced]


def candidate_files(current: list[Path], given: list[Path], only: bool = False) -> list[Path]:
    """The candidate set: each given file replaces the current file of the same name, or joins the set."""
    if only:
        return list(given)
    out = list(current)
    for g in given:
        same = [i for i, c in enumerate(out) if c.name == g.name]
        if same:
            out[same[0]] = g
        else:
            out.append(g)
    return out


def kind_of(decision: Decision) -> str:
    return "allow" if isinstance(decision, Allow) else "ask" if isinstance(decision, Ask) else "deny"


def _reason(decision: Decision) -> str:
    return getattr(decision, "reason", "") or ""


def _proof(decision: Decision) -> Any:
    if isinstance(decision, Ask):
        return {"questions": [q.message for q in decision.questions], "unmet": decision.unmet}
    if isinstance(decision, Deny):
        return decision.proof or {"unmet": decision.unmet, "how_to_unblock": decision.how_to_unblock}
    return decision.proof


class Sandbox:
    """One rulebase over a scratch fact store, on the engine given (the console's replay: its child process's
    own, ``replay_process``; the command line's: its own process's)."""

    def __init__(
        self, files: list[Path], directory: Path, name: str, settings: Any, seeds: dict[str, Any],
        engine: Any, untrusted: Any = None,
    ) -> None:
        from sentinel_mcp.policy.guard import PolicyGuard

        self.guard = PolicyGuard(
            files, None, store_path=directory / f"{name}.db", settings=settings, seeds=seeds, engine=engine,
            untrusted=untrusted,
        )
        self.loaded_sessions: set[str] = set()

    async def start(self) -> str | None:
        await self.guard.start(watch=False)
        return self.guard.problem

    @property
    def version(self) -> str:
        return self.guard.version

    def governs(self, identity: str) -> bool:
        if not self.guard.rulebases.loaded:
            return False
        info = self.guard.rulebases.current.info
        return info.guards_tool(identity) or identity in info.read_only

    async def add_facts(self, session: str, facts: list[Any]) -> None:
        await self.guard.knowledge.add([f.model_copy(update={"session": session}) for f in facts])

    async def add_recorded(self, session: str, recorded: list[tuple[str, str]]) -> None:
        """Facts a recorded proof names, as established then: with the fetch markers of the bindings that
        establish them (so the solver takes them as fetched instead of needing to fetch them)."""
        from sentinel_mcp.policy.prolog_text import quote_atom

        if not recorded or not self.guard.rulebases.loaded:
            return
        module = quote_atom(self.guard.rulebases.current.module)
        knowledge = self.guard.knowledge
        facts = []
        for text, provenance in recorded:
            if provenance not in ("observed", "user", "agent", "seed"):
                provenance = "observed"
            try:
                fact = await knowledge.fact_of_text(session, text, provenance)  # type: ignore[arg-type]
                out = await self.guard.engine.json_query(
                    f"term_to_atom(G, {quote_atom(fact.fact)}), findall(MA, ({module}:binding(B, tool(T, "
                    "Args), _, _), "
                    "copy_term(B-Args, G1-Args1), G1 = G, ground(Args1), sentinel_core:fetched_marker(G, T, "
                    "Args1, M), "
                    "format(atom(MA), '~q', [M])), Ms), sentinel_core:to_json_atom(json([markers=Ms]), Out)"
                )
            except Exception:  # noqa: BLE001 - a recorded text that is not a fact is left out
                continue
            facts.append(fact)
            for marker in out.get("markers") or []:
                facts.append(await knowledge.fact_of_text(session, str(marker), "observed"))
        await self.add_facts(session, facts)

    async def decide(self, call: ToolCall, recorded: str) -> Decision:
        decision = await self.guard.decide(call)
        if isinstance(decision, Ask) and recorded == "allow":
            # the record shows the call went ahead: the confirmations it asked for were given
            confirmations = [
                q for q in decision.questions if q.meta.get("kind") in ("confirm", "confirmation")
            ]
            if confirmations and len(confirmations) == len(decision.questions):
                for q in confirmations:
                    approval = {
                        k: True
                        for k, v in (q.requested_schema.get("properties") or {}).items()
                        if isinstance(v, dict) and v.get("type") == "boolean"
                    }
                    await self.guard.record_answer(call, q, Answer(action="accept", content=approval))
                decision = await self.guard.decide(call)
        return decision

    async def close(self) -> None:
        await self.guard.close()


@dataclass(frozen=True)
class Route:
    """What a replay needs of a catalog's route: the upstream's own name of the tool, its annotations."""

    tool: str
    read_only: bool | None = None
    destructive: bool | None = None


def routes_of(catalog: CatalogHealth | None, rows: list[dict[str, Any]]) -> dict[str, Route]:
    """The routes of the tools ``rows`` name, as the catalog has them now."""
    out: dict[str, Route] = {}
    for name in {str(r.get("tool") or "") for r in rows}:
        route = catalog.route(name) if catalog is not None else None
        if route is not None:
            ann = route.exposed.annotations
            out[name] = Route(
                route.tool, ann.read_only_hint if ann else None, ann.destructive_hint if ann else None
            )
    return out


def _call_of(row: dict[str, Any], routes: dict[str, Route]) -> ToolCall | None:
    name, upstream = str(row.get("tool") or ""), row.get("upstream")
    if not upstream or not isinstance(row.get("arguments"), (dict, type(None))):
        return None
    route = routes.get(name)
    tool = (
        route.tool
        if route is not None
        else (name[len(upstream) + 2 :] if name.startswith(f"{upstream}__") else name)
    )
    return ToolCall(
        name=name,
        server=str(upstream),
        tool=tool,
        arguments=row.get("arguments") or {},
        session_id=str(row.get("session")),
        principal=row.get("principal"),
        origin="client",
        read_only=route.read_only if route is not None else None,
        destructive=route.destructive if route is not None else None,
    )


def _redacted(value: Any) -> bool:
    """The redactor's marks ("[redacted …]"): the call's real arguments are not on record."""
    return "[redacted" in repr(value)


def pick_rows(
    rows: list[dict[str, Any]], since: float | None = None, limit: int = MAX_CALLS
) -> list[dict[str, Any]]:
    """Distinct decided calls (newest record of each session, tool and arguments), newest first."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for r in reversed(rows):
        if r.get("origin") not in REPLAYED_ORIGINS or r.get("decision") not in ("allow", "deny", "ask"):
            continue
        if r.get("outcome") in ("unknown_tool", "bad_arguments", "answer_refused", "push_refused"):
            continue
        if since is not None and (r.get("ts") or 0) < since:
            continue
        key = (r.get("session"), r.get("tool"), r.get("arg_digest"))
        if key in seen:
            continue
        seen.add(key)
        out.append(r)
        if len(out) >= limit:
            break
    return out


async def replay(
    rows: list[dict[str, Any]],
    *,
    current: list[Path],
    candidate: list[Path],
    live_facts: Any,
    settings: Any,
    seeds: dict[str, Any],
    engine: Any,
    routes: dict[str, Route] | None = None,
    untrusted: Any = None,
) -> ReplayReport:
    """Decide ``rows`` (audit records, newest first) under both rulebases. ``live_facts``: the live FactStore
    (read only), or None; ``routes``: the catalog's routes of the tools named (``routes_of``), or None;
    ``untrusted``: the bounds a client's candidate is held to (``UntrustedRules``), or None for the owner's
    own files (the command line)."""
    with tempfile.TemporaryDirectory(prefix="sentinel-replay-") as tmp:
        base = Sandbox(current, Path(tmp), "baseline", settings, seeds, engine)
        cand = Sandbox(candidate, Path(tmp), "candidate", settings, seeds, engine, untrusted)
        try:
            base_problem = await base.start()
            cand_problem = await cand.start()
            report = ReplayReport(base.version, cand.version)
            if cand_problem:
                report.problems.append(cand_problem)
                return report
            if base_problem:
                report.problems.append(f"the current rulebase: {base_problem}")
                return report
            for row in rows:
                call = _call_of(row, routes or {})
                if call is None:
                    report.skipped_other.append(f"{row.get('tool')}: not a call to an upstream tool")
                    continue
                if _redacted(row.get("arguments")):
                    report.skipped_other.append(
                        f"{row.get('tool')} (#{row.get('id')}): arguments were redacted"
                    )
                    continue
                # a record kept cut (``core/record_bounds``) does not hold the call, or what it was decided
                # on: deciding the cut copy would be deciding another call
                cut = [k for k in ("arguments", "proof") if was_cut(row.get(k))]
                if cut:
                    report.skipped_other.append(
                        f"{row.get('tool')} (#{row.get('id')}): its {' and '.join(cut)} were kept cut in the "
                        "record (too large to keep whole)"
                    )
                    continue
                if not base.governs(call.identity) and not cand.governs(call.identity):
                    report.skipped_default += 1
                    continue
                report.examined += 1
                root, _ = proof_nodes(row.get("proof"))
                recorded_facts = set(facts_with_provenance(root))
                for box in (base, cand):
                    if call.session_id not in box.loaded_sessions:
                        box.loaded_sessions.add(call.session_id)
                        stored = await live_facts.valid(call.session_id) if live_facts is not None else []
                        await box.add_facts(call.session_id, [f for f in stored if not f.internal])
                    await box.add_recorded(call.session_id, sorted(recorded_facts))
                b = await base.decide(call, str(row.get("decision")))
                c = await cand.decide(call, str(row.get("decision")))
                report.results.append(
                    Replayed(
                        row,
                        str(row.get("decision")),
                        kind_of(b),
                        kind_of(c),
                        _reason(b),
                        _reason(c),
                        _proof(b),
                        _proof(c),
                    )
                )
            return report
        finally:
            await cand.close()
            await base.close()
