"""The policy guard: the gateway's Guard, proving rulebase guards against the session's facts.

Allow(proof) / Deny(unmet, how_to_unblock) / Ask(questions). Tools no rulebase guard covers go to the
gateway's fail-safe ``DefaultGuard``. A guard that errors or exceeds its limits denies.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any, Callable

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core import process_clock
from sentinel_mcp.core.asking import spelled_refusal
from sentinel_mcp.core.lazy_proof import LazyProof
from sentinel_mcp.core.decision import Allow, Ask, Decision, Deny, Guard, ToolCall
from sentinel_mcp.core.port import GatewayPort
from sentinel_mcp.policy.agent_answer_bound import MAX_AGENT_ANSWERS, MAX_PRINCIPAL_AGENT_ANSWERS
from sentinel_mcp.policy.answer_store import AnswerStore
from sentinel_mcp.policy.denial_words import how_to_unblock, unmet_of
from sentinel_mcp.policy.engine import DEFAULT_INFERENCE_LIMIT, KeptProof, PrologEngine, shared_engine
from sentinel_mcp.policy.fact_store import FactStore
from sentinel_mcp.policy.caller_reach import withholding_for
from sentinel_mcp.policy.held_facts import HeldFacts
from sentinel_mcp.policy.kept_turns import KeptTurns
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.observe_step import ObserveStep
from sentinel_mcp.policy.query_worker import QueryBudget, QueryWorker
from sentinel_mcp.policy.read_guards import CallerReads, looked_call
from sentinel_mcp.policy.policy_documents import PolicyDocuments, document_text
from sentinel_mcp.policy.questions import UnaskableChoices, questions_of, secrets_spelled
from sentinel_mcp.policy.rulebase import Rulebase, RulebaseHolder
from sentinel_mcp.policy.schema_secret_flows import SchemaSecretFlows
from sentinel_mcp.policy.shared_rulebases import SharedRulebases
from sentinel_mcp.policy.store_upkeep import upkeep
from sentinel_mcp.storage.location import is_server_url
from sentinel_mcp.policy.solver import FetchFilter, Solver, SolverResult
from sentinel_mcp.policy.untrusted_rules import UntrustedRules
from sentinel_mcp.policy.strict_symbolic import ungrounded_arguments
from sentinel_mcp.policy.version_history import PolicyHistory, read_texts
from sentinel_mcp.policy.withheld_facts import WithheldFn
from sentinel_mcp.policy.write_rereads import reread_for_write
from sentinel_mcp.search.search_service import SearchService
from sentinel_mcp.search.settings import SearchSettings

log = logging.getLogger(__name__)
_instances = itertools.count(1)


def _default_guard(settings: PolicySettings) -> Guard:
    from sentinel_mcp.policy.default_guard import DefaultGuard

    return DefaultGuard(settings)


class PolicyGuard(AnswerStore, ObserveStep, KeptTurns, Guard):
    def __init__(self, rulebase_files: list[Path], port: GatewayPort | None, *, store_path: Path | str,
                 settings: PolicySettings | None = None, seeds: dict[str, Any] | None = None,
                 engine: PrologEngine | None = None, poll_interval: float = 1.0, purge_interval: float = 60.0,
                 inference_limit: int = DEFAULT_INFERENCE_LIMIT, search: SearchSettings | None = None,
                 withheld: WithheldFn | None = None, fast_path: bool = True, lazy_proofs: bool = False,
                 write_proofs_behind: bool = False,
                 keep_history: bool = False, local_dir: Path | None = None,
                 default: Guard | None = None, private: Callable[[str], bool] | None = None,
                 untrusted: UntrustedRules | None = None) -> None:
        """``store_path``: the facts' SQLite file, or the postgresql:// URL replicas share; ``local_dir``:
        where this process's own indexes live (default: beside the facts' file); ``private``: whether a
        session is one no other process writes facts for (its id made here from random bytes: the gateway's
        conversations tell); None: every session may be written by others. ``untrusted``: the rulebase is a
        client's text (a console candidate), held to the bounds of the rulebase in force."""
        self.untrusted = untrusted
        self.settings = settings or PolicySettings()
        # (tool, principal) -> the personal kind a client's introspection may not see (the consent gate's)
        self.withheld = withheld
        self.engine = engine or shared_engine()
        self.port = port
        self.store = FactStore(store_path)
        self._answering = asyncio.Lock()
        self.max_agent_answers = MAX_AGENT_ANSWERS  # standing agent answers a conversation keeps
        self.max_principal_agent_answers = MAX_PRINCIPAL_AGENT_ANSWERS  # ... and a principal, in all
        self.rulebases = RulebaseHolder(self.engine, rulebase_files, poll_interval=poll_interval)
        self.rulebases.own_documents = untrusted is None
        # every version loaded (or refused), with its texts: the console's policy history (the gateway's guard
        # only: a command's or a replay's guard loads nothing into force)
        self.history = PolicyHistory((local_dir or Path(store_path).parent) / "policy_history.db")
        self.keep_history = keep_history
        self.rulebases.observers.append(self._remember_load)
        self.knowledge = Knowledge(self.store, self.engine, f"{os.getpid()}x{next(_instances)}", seeds)
        self.schema_secrets = SchemaSecretFlows(self.engine)
        self.solver = Solver(
            self.knowledge,
            port,
            is_read_only=self.is_read_only,
            fetch_timeout=max(1.0, self.settings.guard_timeout * 0.8),
            max_fetches=self.settings.max_fetches,
        )
        self.default = default or _default_guard(self.settings)  # the gateway's: one book of confirmations
        self.queries = QueryWorker(
            QueryBudget(
                seconds=self.settings.query_seconds,
                inferences=self.settings.query_inferences,
                stack_bytes=self.settings.query_memory_mb << 20,
                address_space_bytes=(self.settings.query_memory_mb << 20) * 4 + (512 << 20),
            ), per_principal=self.settings.query_waiting_per_principal)
        self.purge_interval = purge_interval
        self.inference_limit = inference_limit
        # False: every rule interpreted and the goal sent as text (the reference the fast path is compared
        # with)
        self.fast_path = fast_path
        # True: an allow's proof is a LazyProof, rendered when read (the gateway renders it for the audit row)
        self.lazy_proofs = lazy_proofs
        # True (with lazy_proofs): the engine writes the proof right after answering, in the same job, as the
        # caller goes on (no second hop): for a caller that reads every proof, like the gateway's audit
        self.write_proofs_behind = write_proofs_behind
        self.load_error: str | None = None
        self._purger: asyncio.Task[None] | None = None
        self._documents: tuple[str, PolicyDocuments] | None = None  # (rulebase version, its documents)
        # policy documents and memories, searchable (an index next to the facts)
        # (in the store replicas share when that is PostgreSQL: every replica searches the same memories)
        passages = (store_path if is_server_url(store_path)
                    else (local_dir or Path(store_path).parent) / "passages.db")
        self.search = SearchService(passages, search)
        self._indexed: str | None = None  # the rulebase version whose documents are indexed
        self.local_dir = local_dir or Path(store_path).parent
        self.private = private
        self.replica: str | None = None
        self.cluster_key: bytes | None = None
        self.shared_versions: SharedRulebases | None = None

    # ---------------------------------------------------------------- lifecycle
    async def start(self, watch: bool = True) -> None:
        """Open the fact store, load the rulebase, start hot reload and the purge of expired facts.

        A rulebase that cannot be loaded fails closed: every call is denied, naming the file, line and
        problem, until hot reload loads a fixed file (``problem`` says why meanwhile, for /healthz)."""
        await self.store.open()
        # one decision's wall-clock budget inside the engine is the guard's (a rule that computes for ever is
        # stopped there, the call denied); the engine keeps it for every later decision
        seconds = min(3600.0, max(0.001, self.settings.guard_timeout))
        await self.engine.goal(f"sentinel_core:sn_set_guard_seconds({seconds:.3f})")
        try:
            if self.keep_history:
                await self.history.open()
        except Exception:  # noqa: BLE001 - the history is for people; the policy does not depend on it
            log.exception("policy history not available")
        try:
            await self.rulebases.reload()
        except Exception as e:  # noqa: BLE001 - reported; no rulebase, no call
            self.load_error = str(e)
            log.error("rulebase not loaded, every call is denied until it is fixed: %s", e)
        if self.replica is not None and self.store.shared and self.store.database is not None:
            self.shared_versions = SharedRulebases(self.store.database, self.rulebases, self.replica,
                                                   self.local_dir / "cluster-rulebases", key=self.cluster_key)
            await self.shared_versions.start()
        if watch:
            self.rulebases.start_watching()
            self._purger = asyncio.create_task(upkeep(self.knowledge, self.search, self.purge_interval),
                                               name="fact-purge")

    def join_cluster(self, replica: str, key: bytes | None = None) -> None:
        self.replica, self.cluster_key = replica, key  # the key signs the rulebase versions it publishes

    @property
    def cluster_problem(self) -> str | None:  # a cluster version not loaded here, or why calls are refused
        return None if self.shared_versions is None else self.shared_versions.cluster_problem

    @property
    def reload_problem(self) -> str | None:
        """The configured files changed and do not load: the last good rulebase stays in charge, and says so
        (never a silent older policy); None otherwise."""
        if not self.rulebases.loaded or self.rulebases.last_error is None:
            return None
        return (f"rulebase reload failed, version {self.rulebases.current.version} stays in charge: "
                f"{self.rulebases.last_error}")

    async def _remember_load(self, version: str, ok: bool, cause: str, error: str | None) -> None:
        texts = await asyncio.to_thread(read_texts, self.rulebases.attempted)
        await self.history.record(version=version, ok=ok, cause=cause, texts=texts, error=error)

    async def close(self) -> None:
        if self.shared_versions is not None:
            await self.shared_versions.close()
        await self.history.close()
        await self.rulebases.stop_watching()
        if self._purger is not None:
            self._purger.cancel()
            try:
                await self._purger
            except asyncio.CancelledError:
                pass
            self._purger = None
        await self.queries.close()
        await self.search.close()
        await self.knowledge.forget_sessions()
        await self.rulebases.unload_all()
        await self.store.close()

    # ---------------------------------------------------------------- Guard protocol
    @property
    def version(self) -> str:
        rb = self.rulebases.active  # the attribute, not ``loaded`` and ``current``: read three times a call
        return rb.version if rb is not None else "unloaded"

    def governed_names(self) -> set[str]:
        """The tool names the loaded rulebase speaks of (guards, bindings, read-only declarations, effects):
        no other server's tool may be exposed under one of them."""
        if not self.rulebases.loaded:
            return set()
        info = self.rulebases.current.info
        return {*info.guards, *info.read_only, *info.effects, *(b.tool for b in info.bindings)}

    def changes_facts(self, call: ToolCall) -> bool:
        rb = self.rulebases.active
        return rb is not None and rb.info.names_effect(call.identity)

    def is_read_only(self, name: str) -> bool:
        if self.rulebases.loaded and name in self.rulebases.current.info.read_only:
            return True
        tool = self.port.find_tool(name) if self.port is not None else None
        return bool(tool and tool.annotations and tool.annotations.read_only_hint)

    def record_databases(self) -> list[Any]:
        return [self.store.database]

    def session_facts(self, principal: str | None = None) -> HeldFacts:
        reads = None if principal is None else partial(self.reads_of, principal)
        return HeldFacts(self.store, self.knowledge, withholding_for(self.withheld, self.port, principal),
                         self._bound_tools, reads, self.guards_read)

    def guards_read(self, tool: str) -> bool:
        """Whether the rulebase in force guards ``tool`` (an identity) and the solver may read it: what a
        principal's look reads from it is that principal's read (``read_guards.py``)."""
        info = self.rulebases.current.info if self.rulebases.loaded else None
        return info is not None and info.guards_tool(tool) and self.is_read_only(tool)

    def reads_of(self, principal: str, session: str) -> CallerReads:
        """``principal``'s reads of guarded tools in ``session``: each decided as its call of the tool would
        be, asking nothing and using nothing up; the facts the guard reads for it are its own (fetched
        freely)."""

        async def decide(tool: str, arguments: dict[str, Any]) -> Decision:
            return await self.decide(looked_call(self.port, tool, arguments, session, principal), spend=False)

        return CallerReads(self.guards_read, decide)

    def _bound_tools(self) -> list[tuple[str, str]]:
        """(predicate, tool) of each binding of the rulebase in force."""
        if not self.rulebases.loaded:
            return []
        return [(b.predicate, b.tool) for b in self.rulebases.current.info.bindings]

    @property
    def problem(self) -> str | None:  # type: ignore[override]
        """Why this guard cannot govern now (no rulebase loaded), or None when it can."""
        if self.rulebases.loaded:
            return None
        why = self.rulebases.last_error or self.load_error or "not loaded yet"
        return f"the rulebase could not be loaded: {why}"

    async def preview(self, call: ToolCall) -> Decision:
        return await self.decide(call, spend=False)

    async def recheck(self, call: ToolCall) -> Decision:
        return await self.decide(call, spend=False, fresh=True)

    async def decide(
        self, call: ToolCall, *, spend: bool = True, may_fetch: FetchFilter | None = None, fresh: bool = False
    ) -> Decision:
        """``spend``: an allow uses up the confirmation its proof stands on (one confirmation, one call);
        False only asks what the call would get (``why_not``), leaving everything as it was. ``may_fetch``:
        which tools the solver may fetch from (a principal's ``why_not``: its own reach); None: every
        read-only tool a binding names (the guard's own fetches for a call). ``fresh``: ``recheck``'s."""
        rb = self.rulebases.active
        if rb is None:  # fail closed: the tools the rulebase would govern are not served
            problem = self.problem
            return Deny(
                reason=f"Sentinel denies every call until its policy loads: {problem}",
                unmet=["rulebase_not_loaded"],
                how_to_unblock=[
                    "tell the user: the policy file has an error (above); once it is fixed, "
                    "Sentinel reloads it and calls are decided again"
                ],
            )
        if self.shared_versions is not None and (behind := self.shared_versions.refusal()) is not None:
            return behind  # behind the cluster's newest version (or unable to tell): every call refused
        if call.secret_arguments and (leak := await self.schema_secrets.refusal(rb, call)) is not None:
            return leak  # a rule bound to it shows what the tool's schema declares secret
        # rules bind to the tool's identity (server + its own name: read once), never to its exposed name
        if not rb.info.guards_tool(identity := call.identity) or _policy_read(call, rb):
            if identity in rb.info.read_only:
                return Allow(reason=f"{call.name} is declared read-only by the rulebase")
            if spend:
                return await self.default.decide(call)
            from sentinel_mcp.policy.default_guard import DefaultGuard

            if isinstance(self.default, DefaultGuard):  # only it keeps confirmations a look could use up
                return await self.default.decide(call, spend=False)
            return await self.default.decide(call)
        try:
            await reread_for_write(self.knowledge, call, rb, spend=spend or fresh)
            epoch = self.engine.confirmations_taken  # before the proof (see _spent)
            first = await self._first_pass(call, rb)
            if first is not None and first[1] is not None and first[1].get("status") == "proved":
                tree = first[1].get("tree")
                if isinstance(tree, KeptProof):  # the common case, answered without the solver's machinery
                    if spend and not await self._spent(call, rb, epoch):
                        return await self._decide_guarded(call, rb, spend=spend)  # on what is left now
                    return Allow(
                        reason=f"guard of {call.name} proved",
                        proof=LazyProof(partial(self._rendered_kept, rb, tree)),
                    )
            return await self._decide_guarded(call, rb, first, spend=spend, epoch=epoch, may_fetch=may_fetch)
        except Exception:  # noqa: BLE001 - a guard that errors denies
            # the details (engine goals, stack) go to the log only; the caller gets a reference to them
            ref = uuid.uuid4().hex[:10]
            log.exception("policy guard error on %s (reference %s)", call.name, ref)
            return Deny(
                reason=f"the policy guard of {call.name} failed with an internal error (reference {ref} "
                "in Sentinel's log); denied",
                unmet=["guard_error"],
            )

    async def _first_pass(self, call: ToolCall, rb: Rulebase) -> tuple[bool, dict[str, Any] | None] | None:
        """The first proof pass of a lazy guard, on the caller's thread when it may, else as one job on the
        engine's: (ran, answer) as ``PrologEngine.decide_compact_here``, or None when this guard or call takes
        the general path (a reference or written proof, a store replicas share, strict symbolic mode, a
        session not loaded yet). The solver starts from it (``prove_call``), so no pass runs twice; a proved
        call is answered without the solver's machinery, from a job too (a thread without an engine of its
        own, or the engine busy: the solver's pass was the same job, 40 Python calls later)."""
        if not (self.fast_path and self.lazy_proofs) or self.write_proofs_behind or rb.info.option(
            "strict_symbolic"
        ):
            return None
        mod = self.knowledge.ready(call.session_id, rb)
        if mod is None:
            return None
        # process_clock.now()'s reading, one call fewer a decision
        key = (rb.module, mod, process_clock.CLOCK.now(), call.identity, call.arguments, call.digest,
               rb.version)
        first = self.engine.decide_compact_here(*key, self._limit(rb))
        if first[0]:
            return first
        return True, await self.engine.decide_compact(*key, self._limit(rb), try_here=False)

    async def _rendered_kept(self, rb: Rulebase, kept: KeptProof) -> dict[str, Any]:
        """An allow's proof decided by its first pass, as ``_rendered`` writes a SolverResult of one pass and
        no fetch (built directly: no pydantic model validated per allow)."""
        tree = await self.engine.render_kept(kept)
        return {"rulebase": rb.version, "tree": self.documents(rb).quote_tree(tree), "passes": 1,
                "fetches": []}

    def _limit(self, rb: Rulebase) -> int:
        """A proof's inference budget: the rulebase's option, never above the rulebase in force's for a
        client's candidate (its options are the client's too)."""
        limit = rb.info.inference_limit(self.inference_limit)
        return limit if self.untrusted is None else min(limit, self.untrusted.inference_limit)

    def documents(self, rb: Rulebase | None = None) -> PolicyDocuments:
        """The policy documents the active rulebase declares, parsed (once per rulebase version)."""
        rb = rb or self.rulebases.current
        if self._documents is None or self._documents[0] != rb.version:
            self._documents = (rb.version, PolicyDocuments.of_rulebase(rb, self.untrusted))
        return self._documents[1]

    def untrusted_bounds(self) -> UntrustedRules:
        """What a client's candidate rulebase is held to: the documents the rulebase in force cites (no other
        file is read for it) and its inference budget."""
        homes = {f.name: f.resolve().parent for f in self.rulebases.files}
        if not self.rulebases.loaded:
            return UntrustedRules(frozenset(), self.inference_limit, homes)
        rb = self.rulebases.current
        return UntrustedRules(frozenset(self.documents(rb).paths.values()), self._limit(rb), homes)

    async def searchable(self) -> SearchService:
        """The search service, with the active rulebase's policy documents indexed (again when they change).
        """
        if self.rulebases.loaded and self._indexed != self.rulebases.current.version:
            rb = self.rulebases.current
            docs = self.documents(rb)
            texts = {name: document_text(path) for name, path in docs.paths.items()}  # (bounded)
            await self.search.index_documents(docs.paragraphs, texts)
            self._indexed = rb.version
        return self.search

    async def _decide_guarded(
        self, call: ToolCall, rb: Rulebase, first: tuple[bool, dict[str, Any] | None] | None = None, *,
        spend: bool = True, epoch: int | None = None, may_fetch: FetchFilter | None = None,
    ) -> Decision:
        """``first``: the first pass as ``_first_pass`` ran it (the solver starts from its answer);
        ``epoch``: ``confirmations_taken`` before that pass."""
        if epoch is None:
            epoch = self.engine.confirmations_taken
        if rb.info.option("strict_symbolic"):
            await self.knowledge.ensure(call.session_id, rb)  # seeds are established values too
            bad = await ungrounded_arguments(self.knowledge, call, rb)
            if bad:
                return Deny(
                    reason=f"strict symbolic mode: {call.name} has arguments not grounded in established "
                    f"facts or contexts: {', '.join(bad)}",
                    unmet=[f"ungrounded argument {b}" for b in bad],
                    how_to_unblock=[
                        "establish the values through tools first (or bind a context), then "
                        "call with the established values"
                    ],
                )
        result = await self.prove_call(call, rb, first, may_fetch=may_fetch)
        for _ in range(3):  # a confirmation is used by one call (in the whole cluster when replicas share it)
            if result.status != "proved" or not spend:
                break
            if self.store.shared:
                if not _may_use_confirmation(result.tree):
                    break
                if await self.knowledge.spend_confirmation(call.session_id, call.identity, call.digest):
                    break
            elif await self._spent(call, rb, epoch):
                break
            # another call (or replica) used it first: decide on what is stored now
            epoch = self.engine.confirmations_taken
            result = await self.prove_call(call, rb)
        else:
            return Deny(
                reason=f"{call.name}: its confirmation was used by another call at the same time; ask again",
                unmet=["confirmation_spent"],
            )
        docs = self.documents(rb)
        if result.status == "proved" and isinstance(result.tree, KeptProof):
            # kept in the engine: written (with its citations) only when someone reads it
            return Allow(
                reason=f"guard of {call.name} proved",
                proof=LazyProof(lambda: self._rendered(docs, rb.version, result)),
            )
        proof = {
            "rulebase": rb.version,
            "tree": docs.quote_tree(result.tree),
            "passes": result.passes,
            "fetches": [f.model_dump() for f in result.fetches],
        }
        if result.status == "proved":
            return Allow(reason=f"guard of {call.name} proved", proof=proof)
        if result.status not in ("failed", "blocked"):  # an error or an exhausted budget denies
            return Deny(
                reason=f"the guard of {call.name} could not be evaluated: {result.error}; denied",
                unmet=["guard_error"],
                proof=proof,
            )
        if result.status == "blocked" and not result.unmet:
            if spelled := secrets_spelled(result.questions, call):
                return Deny(reason=spelled_refusal(call.name, spelled), unmet=["question_spells_secret"],
                            proof=proof)
            try:
                questions = questions_of(result.questions, call, rb.version)
            except UnaskableChoices as e:  # asked of no one rather than one of two alike choices taken
                return Deny(reason=f"{call.name}: {e}; denied (nothing was asked)", unmet=["unaskable"],
                            proof=proof)
            # a yes given to another text of this call's confirmation does not count: the audit says why
            changed = any(q.meta.get("changed") for q in questions)
            return Ask(
                reason=(CHANGED_TEXT if changed else "")
                + f"{call.name} needs: " + "; ".join(q.message for q in questions),
                questions=questions,
                unmet=[q.meta.get("fact") or q.message for q in questions],
            )
        violations = docs.quote_violations(result.violations)
        for forget in {v["forget"] for v in violations if v.get("kind") == "dont_know" and "forget" in v}:
            # "I don't know" ends this call with its next step; the next call asks it again (only it)
            await self.knowledge.invalidate(call.session_id, forget)
        unmet = unmet_of(result, violations)
        proof["violations"] = violations
        return Deny(
            reason=f"{call.name} is not allowed: " + "; ".join(unmet),
            unmet=unmet,
            how_to_unblock=how_to_unblock(result, violations),
            proof=proof,
        )

    async def _spent(self, call: ToolCall, rb: Rulebase, epoch: int) -> bool:
        """A store of this process only, after a proof allowed ``call``: whether it may go ahead, its
        confirmation (if it stood on one) used up. Taking is atomic in the engine; a call that finds none to
        take while another was taken since its proof began (``epoch``) may have been proved on that very one,
        and is decided again (False). Tools no confirmation ever named cost nothing here."""
        if not self.store.confirmed_tools.may_name(call.identity):
            return True
        if await self.knowledge.take_confirmation(call.session_id, rb, call.identity, call.digest):
            return True
        return self.engine.confirmations_taken == epoch

    async def _rendered(self, docs: PolicyDocuments, version: str, result: SolverResult) -> dict[str, Any]:
        """An allow's proof as shown and audited: the engine's tree with the policy sentences it cites."""
        tree = await self.engine.render_kept(result.tree)
        return {
            "rulebase": version,
            "tree": docs.quote_tree(tree),
            "passes": result.passes,
            "fetches": [f.model_dump() for f in result.fetches],
        }

    async def prove_call(
        self,
        call: ToolCall,
        rb: Rulebase | None = None,
        first: tuple[bool, dict[str, Any] | None] | None = None,
        *,
        may_fetch: FetchFilter | None = None,
    ) -> SolverResult:
        """The solver's passes over the call's guards. ``first``: (ran, answer) of a first pass already
        tried by ``_first_pass``: its answer is the first pass's, or, when it ran over its cap, the first pass
        runs on the engine thread."""
        rb = rb or self.rulebases.current
        mod = await self.knowledge.ensure(call.session_id, rb)
        limit = self._limit(rb)

        # a proof whose tree is written later cannot be searched for a confirmation to spend (shared stores)
        compact = self.fast_path and self.lazy_proofs and not self.store.shared
        given = first[1] if first is not None else None
        # a first pass over the caller's cap: it and the passes after it (as large) go to the engine thread
        here = first is None or first[0] is False

        async def one_pass() -> dict[str, Any]:
            nonlocal given
            if given is not None:
                out, given = given, None
                return out
            if compact:
                return await self.engine.decide_compact(
                    rb.module,
                    mod,
                    process_clock.now(),
                    call.identity,
                    call.arguments,
                    call.digest,
                    rb.version,
                    limit,
                    write_behind=self.write_proofs_behind,
                    try_here=here,
                )
            return await self.engine.decide(
                rb.module,
                mod,
                process_clock.now(),
                call.identity,
                call.arguments,
                call.digest,
                rb.version,
                limit,
                fast=self.fast_path,
            )

        deadline = time.monotonic() + self.settings.guard_timeout * 0.8
        return await self.solver.solve(
            one_pass, rb, call.session_id, depth=call.depth, deadline=deadline, may_fetch=may_fetch
        )


CHANGED_TEXT = (
    "what the confirmation shows changed since the user's yes, which counts only for the text shown; "
    "asked again: "
)


def _policy_read(call: ToolCall, rb: Rulebase) -> bool:
    """Whether ``call`` is the solver's own read of a read-only tool: the guard of a read governs what a
    caller reads, not the facts the policy reads to decide a call (they stay inside Sentinel; a principal's
    look into them is the caller's read, ``read_guards.py``). Such a read is decided as if the tool had no
    guard (else a guard needing the very facts its tool gives would never be proved)."""
    return call.origin == "solver" and (call.read_only is True or call.identity in rb.info.read_only)


def _may_use_confirmation(tree: Any) -> bool:
    """Whether a proof may stand on a stored confirmation (a false yes costs one look-up, never a decision).
    """
    return "confirmed" in json.dumps(tree, default=str)
