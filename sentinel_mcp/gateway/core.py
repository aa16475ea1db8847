"""The gateway core: one path every tool call takes, whatever its front (MCP, A2A, the policy's fetches,
built-ins). ``execute`` runs five steps over a ``CallRequest``:

route (catalog name -> upstream and tool, reachable by the principal), validate (the arguments against the
tool's schema; the call becomes a ``ToolCall``), decide (guard and consent gate; the decision written ahead to
the audit log), forward (the upstream runs it; its questions are relayed), observe (untrusted results marked,
the guard learns, the outcome written). Each step either hands the next one its input or ends the call with
an outcome; every outcome that went through a decision carries its ``decision_id``.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from collections import Counter
from typing import Any, Callable

import anyio
from mcp.types import (
    CallToolResult,
    InputRequiredResult,
)

from sentinel_mcp.config import Config
from sentinel_mcp.core.call_meta import call_meta
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.core.caller_link import CallOf
from sentinel_mcp.core.display_text import compose, said
from sentinel_mcp.core.decision import (
    Allow,
    Answer,
    Guard,
    Origin,
    ToolCall,

)
from sentinel_mcp.core.port import (
    CallOutcome,
    Completed,
    InvokeOutcome,
    ProgressFn,
    Refused,
    UpstreamNeedsInput,
)
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, value_problem
from sentinel_mcp.gateway import call_timings
from sentinel_mcp.gateway.argument_check import ArgumentCheck
from sentinel_mcp.gateway.result_check import UNFIT, Later, ResultCheck
from sentinel_mcp.core import sent_secrets
from sentinel_mcp.gateway.asked_questions import AskedQuestions
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.call_record import CallRecord, RecordsGate, storage_refusal
from sentinel_mcp.gateway.caller_recheck import OUTCOME as LAPSED, CallerLapsed
from sentinel_mcp.gateway.catalog import ToolRoute
from sentinel_mcp.gateway.catalog_view import CatalogView
from sentinel_mcp.gateway.consent_gate import ConsentGate, told_consents
from sentinel_mcp.gateway.decide_step import DecideStep, _proof_of, answered_of
from sentinel_mcp.gateway.midcall_answers import AcceptGate, MidCallRefusal, lapsed
from sentinel_mcp.gateway.call_preview import CallPreview
from sentinel_mcp.gateway.answer_refusals import AnswerRefusals
from sentinel_mcp.gateway.first_connections import until_first_listed
from sentinel_mcp.gateway.idle_loop import loop_is_idle
from sentinel_mcp.gateway.judged_arguments import JudgedArguments
from sentinel_mcp.gateway.observe_step import ObserveStep, error_result
from sentinel_mcp.gateway.session_writes import SessionWrites, in_turns
from sentinel_mcp.gateway.conversations import Conversations
from sentinel_mcp.gateway.result_shape import ResultRefused, too_many_blocks
from sentinel_mcp.gateway.shown_result import LongStructure, shown_result, unfit_once_marked
from sentinel_mcp.gateway.own_results import without_others_claims, without_verdict
from sentinel_mcp.core.deployment_caps import cap
from sentinel_mcp.gateway.push_refusals import PushRefusals
from sentinel_mcp.gateway.person_inbox import (
    PERSON_ORIGINS,
    PersonInbox,
    PersonLink,
    reaches_person,
)
from sentinel_mcp.gateway.telemetry import traced
from sentinel_mcp.gateway.upstream import (
    BuiltinTarget,
    CallerLink,
    UpstreamCallError,
    UpstreamUnavailable,
)
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from sentinel_mcp.gateway.upstream_rounds import Unrelayed, call_upstream
from sentinel_mcp.identity.call_principal import call_principal
from sentinel_mcp.identity.principal import ANONYMOUS, INTERNAL, OWNER, Principal
from sentinel_mcp.gateway.call_rates import CallRates
from sentinel_mcp.storage import StorageError

log = logging.getLogger(__name__)

MAX_DEPTH = 4  # solver fetches nest: a guard's fetch is itself guarded
# one principal's calls running at once (``SENTINEL_CAP_CALLS_IN_FLIGHT`` changes it): far above what an
# assistant runs, low enough that a flood holds a bounded share of memory and of the upstreams
MAX_CALLS_IN_FLIGHT = 256


Outcome = CallOutcome  # the name the engine's tests know


class Gateway(DecideStep, ObserveStep, CatalogView, AnswerRefusals, CallPreview, JudgedArguments):
    """Implements ``GatewayPort`` and ``FrontPort``: the one path every tool call takes."""

    def __init__(self, config: Config, audit: AuditLog, manager: UpstreamManager, guard: Guard) -> None:
        self.config = config
        self.audit = audit
        self.manager = manager
        self.guard = guard
        self.more_records: list[Any] = []  # more stores a call needs writable (name, health, probe)
        self.records = RecordsGate(self._record_stores)
        self.inflight = 0  # calls being executed (a stopping host drains them)
        # a principal's own calls at once (a policy's fetches for them not counted): a flooding client holds
        # only its own share of the gateway and its upstreams
        self.calls_in_flight: Counter[str] = Counter()
        self.max_calls_in_flight = cap("CALLS_IN_FLIGHT", MAX_CALLS_IN_FLIGHT)
        self._cap_warned: dict[str, float] = {}
        self.rates = CallRates(
            {p.name: p.calls_per_minute for p in config.sentinel.principals if p.calls_per_minute},
            config.sentinel.policy.calls_per_minute,
            {p.name: p.burst for p in config.sentinel.principals if p.burst},
            exempt=(OWNER.name, INTERNAL.name),
        )
        self.draining = False  # set when the host stops: new calls are refused
        self.conversations = Conversations()
        # a conversation's writes with effects take turns, and those of others they depend on
        self.session_writes = SessionWrites(config.sentinel.policy.write_turn_seconds)
        self.consent_gate: ConsentGate | None = None  # personal reads need their principal's consent
        # every principal the config names, by name (A2A callers reach the gateway by name)
        self.principals: dict[str, Principal] = {p.name: p for p in (OWNER, ANONYMOUS, INTERNAL)}
        self.arguments = ArgumentCheck()
        self.results = ResultCheck()  # an outside server's results against their tools' output schemas
        self.observers: list[Callable[[AuditEntry], None]] = []
        # the console's inbox, when it runs: where questions no caller can be asked wait for the person
        self.person_inbox: PersonInbox | None = None
        self.asked_questions = AskedQuestions()  # the policy's questions put to callers, for their answers
        # requests upstreams push during calls and Sentinel refuses: audited, bounded
        self.push_refusals = PushRefusals(audit.write)
        manager.on_push_refused = self.push_refusals.record

    def _record_stores(self) -> list[Any]:
        """The databases a decision is recorded in: the audit log, and the guard's own (its fact store);
        and the audit anchor outside the data dir, when it runs (``audit_anchoring``)."""
        return [self.audit.db, *self.guard.record_databases(), *self.more_records]

    def principal_for(self, principal: Principal | str | None, session_id: str, origin: Origin) -> Principal:
        """The principal a call runs for (``identity/call_principal.py``)."""
        return call_principal(principal, session_id, origin, self.principals, self.conversations.principal_of)

    @property
    def policy_version(self) -> str:
        return self.guard.version

    # ------------------------------------------------------------------ GatewayPort
    async def invoke(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        session_id: str,
        client: str | None = None,
        origin: Origin = "client",
        answers: dict[str, Answer] | None = None,
        depth: int = 0,
        progress: ProgressFn | None = None,
        principal: Principal | str | None = None,
        link: CallerLink | None = None,
        identity: str | None = None,
        purpose: str | None = None,
        recheck: Callable[[], Any] | None = None,
    ) -> InvokeOutcome:
        outcome = await self.execute(
            name,
            arguments,
            session_id=session_id,
            client=client,
            origin=origin,
            answers=answers,
            depth=depth,
            progress=progress,
            principal=principal,
            link=link,
            identity=identity,
            purpose=purpose,
            recheck=recheck,
        )
        if isinstance(outcome, UpstreamNeedsInput):
            asks = [getattr(r.params, "message", "") for r in (outcome.result.input_requests or {}).values()]
            what = "; ".join(a for a in asks if a) or "input"
            return Refused(
                reason=f"{name} needs the device owner's answer first ({what}); it can be given "
                "through an MCP client of this Sentinel or its CLI, not by this caller",
                decision_id=outcome.decision_id,
            )
        return outcome

    # ------------------------------------------------------------------ the pipeline
    async def execute(
        self,
        name: str,
        arguments: Any,
        *,
        session_id: str,
        client: str | None = None,
        origin: Origin = "client",
        answers: dict[str, Answer] | None = None,
        depth: int = 0,
        progress: ProgressFn | None = None,
        link: CallerLink | None = None,
        upstream_input: dict[str, Any] | None = None,
        upstream_state: str | None = None,
        preapproved_digest: str | None = None,
        principal: Principal | str | None = None,
        purpose: str | None = None,
        identity: str | None = None,
        recheck: Callable[[], Any] | None = None,
    ) -> Outcome:
        return await self.run(
            CallRequest(
                name,
                arguments,
                session_id,
                client,
                origin,
                answers,
                depth,
                progress,
                link,
                upstream_input,
                upstream_state,
                preapproved_digest,
                principal,
                purpose,
                identity=identity,
                recheck=recheck,
            )
        )

    # one span per call, whichever way it came in (``execute``, ``invoke``, or the front's ``run``)
    @traced(
        lambda self, req: "sentinel.fetch" if req.origin == "solver" else "sentinel.call",
        lambda self, req: {
            "sentinel.tool": req.name,
            "sentinel.origin": req.origin,
            "sentinel.session": req.session_id,
            "sentinel.client": req.client,
        },
    )
    async def run(self, req: CallRequest) -> Outcome:
        """One call, start to end: admitted (not draining, records writable), then the five steps."""
        who = self.principal_for(req.principal, req.session_id, req.origin)
        rec = CallRecord(
            self.audit,
            self.guard.version,
            self.observers,
            self._alone,
            session=req.session_id,
            client=req.client,
            origin=req.origin,
            tool=req.name,
            principal=who.name,
        )
        rec.answer_meta = req.answer_meta
        if self.draining and req.depth == 0:
            return Refused(reason="Sentinel is shutting down; call again once it is back")
        # a store that cannot be written refuses everything (fail closed)
        problem = None if self.records.all_healthy() else await self.records.problem()
        if problem is not None:
            return Refused(reason=problem)
        top = req.depth == 0
        if top:
            refused = self._take_place(who.name)
            if refused is not None:
                return Refused(reason=f"Sentinel refused this call: {refused}")
        self.inflight += 1
        # a policy fetch's time counts for the call whose decision needed it (``call_timings``)
        parent = call_timings.current() if req.origin == "solver" else None
        started = call_timings.now()
        token = call_timings.enter(rec.timings)
        try:
            return await self._steps(rec, req, who)
        except StorageError as e:  # the decision could not be recorded: nothing was forwarded
            return Refused(reason=storage_refusal(e), decision_id=rec.decision_id)
        finally:
            call_timings.leave(token)
            if parent is not None:
                parent.fetch_spans.append((started, call_timings.now()))
            self.inflight -= 1
            if top:
                self._give_place(who.name)

    def _alone(self) -> bool:
        """The only call in flight, nothing waiting on the loop: its rows may skip the writer."""
        return self.inflight == 1 and loop_is_idle()

    def _over_cap(self, key: str, said: str) -> None:
        """``said`` in the log once a minute per ``key`` (a principal and kind): a flood is not a flood of
        warnings."""
        now = time.monotonic()
        if now - self._cap_warned.get(key, -60.0) >= 60.0:
            if len(self._cap_warned) > 1000:
                self._cap_warned.clear()
            self._cap_warned[key] = now
            log.warning("%s", said)

    async def _steps(self, rec: CallRecord, req: CallRequest, who: Principal) -> Outcome:
        route = await self._route(rec, req, who)
        if isinstance(route, Refused):
            return route
        call = await self._validate(rec, req, who, route)
        if isinstance(call, Refused):
            return call
        if req.origin != "solver" and self.guard.changes_facts(call):
            # decided on the facts every earlier write of the conversation left (session_writes.py)
            return await in_turns(self.session_writes, self.guard, call, wait=req.depth == 0,
                                  run=lambda: self._decided_steps(rec, req, call, route),
                                  refuse=partial(self._turn_refused, rec))
        return await self._decided_steps(rec, req, call, route)

    @staticmethod
    async def _turn_refused(rec: CallRecord, why: str) -> Outcome:
        await rec.final("deny", "denied", reason=why)
        return Refused(reason=why, decision_id=rec.decision_id)

    async def _decided_steps(
        self, rec: CallRecord, req: CallRequest, call: ToolCall, route: ToolRoute
    ) -> Outcome:
        """Decide, forward, observe."""
        # the rulebase in charge now decides: one reloaded while the call waited (its first connection, its
        # conversation's earlier writes: ``in_turns``) is the one its record names
        rec.policy_version = self.guard.version
        decision = await self._decide(rec, req, call, route)
        if not isinstance(decision, Allow):
            return decision
        forwarded = await self._forward(rec, req, call, route, decision)
        if not isinstance(forwarded, CallToolResult):
            return forwarded
        return await self._observe(rec, call, route, decision, forwarded)

    async def _route(self, rec: CallRecord, req: CallRequest, who: Principal) -> ToolRoute | Refused:
        """The catalog's route for the name, if this principal may reach it; else the call is an unknown tool.
        """
        route, reachable = self._lookup(req, who)
        # not there while an upstream it may reach still makes its first connection: the name may be one of
        # its, looked up again once it is there or those attempts are over (first_connections.py); never for
        # the policy's own fetches (they name tools it already knows)
        if not reachable and req.origin != "solver" and await until_first_listed(
                self.manager.upstreams.values(), who.may_reach_some, lambda: self._lookup(req, who)[1]):
            route, reachable = self._lookup(req, who)
        if route is None or not reachable:
            # a tool the caller may not reach is as unknown to it as a tool that does not exist
            await rec.final(
                "error",
                "unknown_tool",
                error="unknown tool" if route is None else f"not reachable by {who.name}",
            )
            return Refused(reason=self._unknown_tool_message(req.name, who), decision_id=rec.decision_id)
        if req.identity is not None and route.identity != req.identity:
            # the answers (or the continuation) were given for the tool this name routed to when it was asked;
            # the catalog changed since, and the name routes to another tool now, which nothing decided
            why = (f"{req.name} names another tool than the one it did when the question was asked (the tool "
                   "list changed); the answers are not used for it: call again to be asked afresh")
            await rec.final("deny", "answer_refused", upstream=route.upstream, reason=why)
            return Refused(reason=why, decision_id=rec.decision_id)
        # argument names the tool declares secret: the audit log's redactor masks them in every row
        rec.base["sensitive"] = route.sensitive
        return route

    def _lookup(self, req: CallRequest, who: Principal) -> tuple[ToolRoute | None, bool]:
        """The catalog's route for the name, and whether ``who`` may reach it."""
        # the policy's own fetches name tools by identity (what rules bind to); everyone else by exposed name
        catalog = self.manager.catalog
        origin = req.origin
        route = catalog.route(req.name, by_identity=True) if origin == "solver" else catalog.route(req.name)
        if route is None and origin == "builtin":
            route = catalog.route(req.name, by_identity=True)
        return route, route is not None and (  # a built-in's call for a caller (a build's model): its reach
            origin == "solver" or (origin == "builtin" and req.principal is None)
            or who.may_reach(route.upstream, route.tool))

    async def _validate(
        self, rec: CallRecord, req: CallRequest, who: Principal, route: ToolRoute
    ) -> ToolCall | Refused:
        """The arguments against the tool's schema and limits, then the call as the guard sees it."""
        name, arguments = req.name, req.arguments
        # one walk of the arguments for the limits and the form's checks (wire_limits.walk_value)
        problem, walk = await self._checked(route, arguments)
        if problem is not None:
            # arguments of a shape past the wire limits are not kept (the record says why they were refused)
            shape = walk[0] if walk is not None else value_problem(arguments, MAX_ARGUMENT_DEPTH)
            kept = arguments if shape is None else None
            await rec.final("error", "bad_arguments", upstream=route.upstream, error=problem, arguments=kept)
            return Refused(reason=problem, decision_id=rec.decision_id)
        # the guard decides on what the upstream gets: its schema's defaults filled, no key it does not
        # declare, 13.0 is the upstream's 13 (judged_arguments.py: a why-not look judges the same)
        arguments, problem = self._shaped(route, arguments, walk)
        if problem is not None:
            problem = compose("invalid arguments for ", name, ": ", problem)  # (its marks kept: shown once)
            await rec.final(
                "error", "bad_arguments", upstream=route.upstream, error=problem, arguments=arguments
            )
            return Refused(reason=problem, decision_id=rec.decision_id)
        ann = route.exposed.annotations
        call = ToolCall(
            name=name,
            server=route.upstream,
            tool=route.tool,
            arguments=arguments or {},
            session_id=req.session_id,
            client=req.client,
            origin=req.origin,
            depth=req.depth,
            principal=who.name,
            purpose=req.purpose,
            read_only=ann.read_only_hint if ann else None,
            destructive=ann.destructive_hint if ann else None,
            self_confirming=self._self_confirming(self.manager.upstreams[route.upstream], route.exposed),
            secret_arguments=route.secret_arguments,
        )
        rec.base.update(upstream=route.upstream, arg_digest=call.digest, arguments=call.arguments)
        if call.secret_arguments:  # what the upstream writes of them on its own is masked (sent_secrets.py)
            sent_secrets.remember(call.principal, route.upstream, call.arguments, call.secret_arguments)
        if req.depth > MAX_DEPTH:
            await rec.final("deny", "denied", reason="nesting too deep")
            return Refused(
                reason=f"{name}: calls nested deeper than {MAX_DEPTH} levels are refused",
                decision_id=rec.decision_id,
            )
        return call

    async def _forward(
        self, rec: CallRecord, req: CallRequest, call: ToolCall, route: ToolRoute, decision: Allow
    ) -> CallToolResult | Outcome:
        """The upstream runs the call; a handshake-era client answers what the upstream asks meanwhile. Its
        result goes on to observe; an upstream that failed, or asks a 2026-era client, ends the call here."""
        up = self.manager.upstreams[route.upstream]
        who, link = rec.base["principal"], req.link
        meta = (
            call_meta(
                rec.base["session"],
                rec.base["client"],
                rec.base["origin"],
                who,
                can_sample=bool(getattr(link, "relays_sampling", False)),
                decision_id=rec.decision_id,
                purpose=call.purpose,
                **told_consents(self.consent_gate, call, route.exposed, decision),
            )
            if isinstance(up.target, BuiltinTarget)
            else None
        )
        started, ask_before = call_timings.now(), rec.timings.ask_s

        def upstream_s() -> float:  # the person's time answering the upstream is not the upstream's
            return call_timings.now() - started - (rec.timings.ask_s - ask_before)

        if self.person_inbox is not None and call.origin in PERSON_ORIGINS and not reaches_person(link):
            # nobody behind this call can be asked: the upstream's own questions go to the console inbox
            link = PersonLink(link, self, who, call)
        gate = AcceptGate(partial(self._may_still_act, call, req))  # an accept meanwhile: decided again
        if link is not None:
            link.decided(rec.decision_id)
            b = rec.base  # what a push it refuses during the call is audited with
            link.call_of = CallOf(who, b["session"], call.name, b["origin"], b["client"], rec.decision_id)
            link.answer_gate = gate
        try:
            # the caller is checked again once, in the upstream's call (``UpstreamCalls._in_slot``): after
            # whatever the call waited for (write turns, a person's answer, its turn, a slot), right before
            # it is sent; CallerLapsed from there (issue 21: asked here too, it was two checks back to back)
            try:
                result = await call_upstream(up, call, req, link, meta, rec.timings)
            finally:
                gate.close()  # (an answer that comes later is for a call that has ended)
            if gate.refused is not None:  # whatever the upstream made of the refused accept
                return await self._refused_midcall(rec, decision, call, gate.refused)
            if isinstance(result, Unrelayed):
                return await self._done(
                    rec,
                    decision,
                    "tool_error",
                    error_result(f"{call.name}: {result.why}", error="unrelayed"),
                    proof=_proof_of(decision),
                    error=result.why,
                )
        except CallerLapsed as e:  # never sent: nothing of it reached the upstream
            return await self._done(rec, decision, LAPSED, error_result(said(e), error=LAPSED), error=said(e))
        except UpstreamUnavailable as e:
            rec.timings.forward_s += upstream_s()
            return await self._done(
                rec,
                decision,
                "upstream_error",
                error_result(str(e), error="upstream_unavailable", upstream=up.name),
                error=said(e),
            )
        except UpstreamCallError as e:
            rec.timings.forward_s += upstream_s()
            if gate.refused is not None:
                return await self._refused_midcall(rec, decision, call, gate.refused)
            await self._outcome_unknown(call)
            kind = "timeout" if e.timeout else "upstream_error"
            return await self._done(
                rec, decision, kind, error_result(str(e), error=kind, upstream=up.name), error=said(e)
            )
        except ResultRefused as e:  # past a shape bound right after its parse: no model of it was built
            rec.timings.forward_s += upstream_s()
            await self._outcome_unknown(call)  # the upstream ran it: refusing its result undoes nothing
            refused = error_result(f"{call.name}: {e.why}", error=e.kind, upstream=up.name)
            return await self._done(rec, decision, "tool_error", refused, proof=_proof_of(decision),
                                    error=e.why)
        except anyio.get_cancelled_exc_class():
            rec.timings.forward_s += upstream_s()
            with anyio.CancelScope(shield=True):
                await self._outcome_unknown(call)
                try:
                    await rec.finished("cancelled", reason=decision.reason, error="cancelled by the caller")
                except StorageError:
                    # the decision row stays, with outcome "forwarded": the record says it never finished
                    pass
            raise
        rec.timings.forward_s += upstream_s()
        bomb = (too_many_blocks(len(result.content))
                if isinstance(result, CallToolResult) and not up.builtin else None)
        if bomb is not None:  # refused before a block is looked at: showing each one takes care
            await self._outcome_unknown(call)  # (as every result refused below: the call may have run)
            refused = error_result(f"{call.name}: {bomb}", error="result_blocks", upstream=up.name)
            return await self._done(rec, decision, "tool_error", refused, proof=_proof_of(decision),
                                    error=bomb)
        if result.meta:  # both give the same object back without ``_meta`` (most answers): not called
            result = without_verdict(result)  # upstreams are hostile too: only Sentinel states its decision
            declared = up.target.result_meta if isinstance(up.target, BuiltinTarget) else frozenset()
            result = without_others_claims(result, declared)  # nor is any other upstream the device firewall
        if isinstance(result, CallToolResult):  # its blocks: not Sentinel's voice, nor others' resources
            shown = shown_result(result, up.name, self.manager.catalog, builtin=up.builtin)
            if isinstance(shown, LongStructure):  # walked in a worker thread, shielded as a long check is
                shown = await shown.shown()
            marked = shown.structured_content is not result.structured_content
            written, result = result, shown
            broken = None if up.builtin else self.results.at_once(route.exposed, result)
            if isinstance(broken, Later):
                # (bounded) the result came: observed, or unknown below; the shield only around a check that
                # waits (a tool's first, a long value): a cancel scope costs ~31 Python calls, on every call
                # when it was entered for a check that could not be interrupted
                with anyio.CancelScope(shield=True):
                    broken = await self.results.problem(route.exposed, result)
            if marked and isinstance(broken, str) and broken.startswith(UNFIT):  # said plainly, not quoted
                with anyio.CancelScope(shield=True):  # and the schema's own reason, when it has one
                    own = await self.results.problem(route.exposed, written)
                broken = unfit_once_marked(up.name, own)
            if broken is not None:  # structured content its own schema refuses: the client is told by us
                await self._outcome_unknown(call)
                return await self._done(rec, decision, "tool_error",
                                        error_result(f"{call.name}: {broken}", error="result_schema",
                                                     upstream=up.name),
                                        proof=_proof_of(decision), error=broken)
        if isinstance(result, InputRequiredResult):
            try:
                await rec.finished("asked", reason="upstream asks for input", proof=_proof_of(decision))
            except StorageError as e:
                return Completed(
                    result=rec.stamp(error_result(storage_refusal(e), error="audit_unavailable"))
                )
            return UpstreamNeedsInput(result=result, call=call, decision_id=rec.decision_id,
                                      answered=tuple(sorted(answered_of(req))))
        return result

    async def _may_still_act(self, call: ToolCall, req: CallRequest) -> MidCallRefusal | None:
        """Why the call may no longer act on an accept to its upstream's question (``midcall_answers.py``)."""
        why = lapsed(req.recheck)
        if why is not None:
            return MidCallRefusal(why, LAPSED)
        denied = await self._decided_again(call, answered_of(req))
        return None if denied is None else MidCallRefusal(denied.reason, "denied")

    async def _refused_midcall(
        self, rec: CallRecord, decision: Allow, call: ToolCall, refused: MidCallRefusal
    ) -> Outcome:
        await self._outcome_unknown(call)  # the upstream may have acted on its own
        result = error_result(refused.why, error=refused.outcome)
        return await self._done(rec, decision, refused.outcome, result, error=refused.why)
