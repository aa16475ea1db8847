"""The gateway core: route, validate, guard, forward, audit. Front-agnostic (MCP, A2A, solver all use it)."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any, Callable

import anyio
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from mcp.types import (
    CallToolResult,
    CreateMessageRequest,
    ElicitRequest,
    ErrorData,
    InputRequiredResult,
    ListRootsRequest,
    TextContent,
    Tool,
)
from pydantic import BaseModel, ConfigDict

from sentinel_mcp.config import Config
from sentinel_mcp.gateway import call_timings
from sentinel_mcp.core.answer_validation import AnswerNotAccepted, answer_problem, goes_ahead
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.core.builtin import declares_self_confirming
from sentinel_mcp.core.call_meta import call_meta
from sentinel_mcp.gateway.call_record import CallRecord, RecordsGate, storage_refusal
from sentinel_mcp.gateway.consent_gate import ConsentGate
from sentinel_mcp.gateway.conversations import Conversations
from sentinel_mcp.core.decision import (
    Allow,
    Answer,
    Ask,
    Decision,
    Deny,
    Guard,
    Origin,
    Question,
    ToolCall,
    argument_digest,
)
from sentinel_mcp.gateway.own_results import sentinel_result
from sentinel_mcp.gateway.telemetry import traced
from sentinel_mcp.core.port import Completed, InvokeOutcome, NeedsInput, ProgressFn, Refused
from sentinel_mcp.core.redactor import sensitive_fields_of
from sentinel_mcp.gateway.person_inbox import PERSON_ORIGINS, PersonInbox, PersonLink, person_for, reaches_person
from sentinel_mcp.gateway.untrusted import mark_untrusted, untrusted_source
from sentinel_mcp.gateway.upstream import (
    BuiltinTarget,
    CallerLink,
    UpstreamCallError,
    UpstreamUnavailable,
)
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, value_problem
from sentinel_mcp.identity.principal import ANONYMOUS, INTERNAL, OWNER, Principal
from sentinel_mcp.storage import StorageError

log = logging.getLogger(__name__)

MAX_DEPTH = 4  # solver fetches nest: a guard's fetch is itself guarded
MAX_ASK_ROUNDS = 4
MAX_UPSTREAM_INPUT_ROUNDS = 5


class UpstreamNeedsInput(BaseModel):
    """A 2026-era upstream returned ``InputRequiredResult``; the front relays it to its client."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    kind: str = "upstream_needs_input"
    result: InputRequiredResult
    call: ToolCall


def error_result(text: str, **info: Any) -> CallToolResult:
    """Sentinel's own error result (details in ``_meta``, never in ``structuredContent``)."""
    return sentinel_result(text, **info)


class Gateway:
    """Implements ``GatewayPort``: the one path every tool call takes."""

    def __init__(self, config: Config, audit: AuditLog, manager: UpstreamManager, guard: Guard) -> None:
        self.config = config
        self.audit = audit
        self.manager = manager
        self.guard = guard
        self.records = RecordsGate(self._record_stores)
        self.inflight = 0  # calls being executed (a stopping host drains them)
        self.draining = False  # set when the host stops: new calls are refused
        self.conversations = Conversations()
        self.consent_gate: ConsentGate | None = None  # personal reads need their principal's consent
        # every principal the config names, by name (A2A callers reach the gateway by name)
        self.principals: dict[str, Principal] = {p.name: p for p in (OWNER, ANONYMOUS, INTERNAL)}
        # one compiled validator per tool name, replaced when the upstream's tool changes (bounded by the catalog)
        self._validators: dict[str, tuple[Tool, Draft202012Validator | None]] = {}
        self.observers: list[Callable[[AuditEntry], None]] = []
        # the console's inbox, when it runs: where questions no caller can be asked wait for the person
        self.person_inbox: PersonInbox | None = None

    def _record_stores(self) -> list[Any]:
        """The databases a decision is recorded in: the audit log, and the guard's own (its fact store)."""
        return [self.audit.db, *self.guard.record_databases()]

    # ------------------------------------------------------------------ catalog view
    def find_tool(self, name: str) -> Tool | None:
        """An exposed name's tool, or a tool's identity's (the policy names tools by identity)."""
        catalog = self.manager.catalog
        route = catalog.route(name) or catalog.route(name, by_identity=True)
        return route.exposed if route else None

    def withheld_personal(self, name: str, principal: str) -> str | None:
        """The kind of personal data tool ``name`` reads that ``principal`` has not consented to (None: none);
        the policy's introspection tools keep facts from such tools away from that principal."""
        catalog = self.manager.catalog
        route = catalog.route(name) or catalog.route(name, by_identity=True)
        if route is None or self.consent_gate is None:
            return None
        return self.consent_gate.withheld_kind(route.exposed, route.identity, principal)

    def list_catalog_tools(self, principal: Principal | None = None) -> list[Tool]:
        """The catalog, or the part of it ``principal`` may reach."""
        if principal is None or principal.unrestricted:
            return self.manager.catalog.tool_list()
        return [r.exposed for r in self.manager.catalog.tools.values() if principal.may_reach(r.upstream, r.tool)]

    def principal_for(self, principal: Principal | str | None, session_id: str, origin: Origin) -> Principal:
        """The principal a call runs for: the one given (by name: as configured; an unknown name may reach
        nothing), else the owner of its session (the solver's fetches), else Sentinel itself."""
        if isinstance(principal, Principal):
            return principal
        if isinstance(principal, str):
            return self.principals.get(principal) or Principal(principal, "token", tools=(), upstreams=())
        owner = self.conversations.principal_of(session_id)
        if owner is None and "/" in session_id:  # session ids start with their principal's name (A2A's too)
            owner = self.principals.get(session_id.split("/", 1)[0])
        if owner is not None:
            return owner
        return OWNER if origin in ("client", "cli") else INTERNAL

    # ------------------------------------------------------------------ GatewayPort
    async def invoke(self, name: str, arguments: dict[str, Any] | None, *, session_id: str,
                     client: str | None = None, origin: Origin = "client", answers: dict[str, Answer] | None = None,
                     depth: int = 0, progress: ProgressFn | None = None,
                     principal: Principal | str | None = None, link: CallerLink | None = None) -> InvokeOutcome:
        outcome = await self.execute(name, arguments, session_id=session_id, client=client, origin=origin,
                                     answers=answers, depth=depth, progress=progress, principal=principal,
                                     link=link)
        if isinstance(outcome, UpstreamNeedsInput):
            asks = [getattr(r.params, "message", "") for r in (outcome.result.input_requests or {}).values()]
            what = "; ".join(a for a in asks if a) or "input"
            return Refused(reason=f"{name} needs the device owner's answer first ({what}); it can be given "
                                  "through an MCP client of this Sentinel or its CLI, not by this caller")
        return outcome

    async def refuse_answers(self, name: str, arguments: Any, *, session_id: str, client: str | None,
                             origin: Origin, reason: str, principal: Principal | str | None = None) -> Refused:
        """Answers that cannot count (no valid state, replayed, not asked, ...): audited before the refusal
        leaves (redacted, like every row), nothing recorded. If even that cannot be written, the refusal says
        so."""
        args = arguments if isinstance(arguments, dict) and value_problem(arguments, MAX_ARGUMENT_DEPTH) is None \
            else None
        who = self.principal_for(principal, session_id, origin)
        route = self.manager.catalog.route(name)
        sensitive = frozenset(sensitive_fields_of(route.exposed)) if route is not None else frozenset()
        rec = CallRecord(self.audit, self.guard.version, self.observers, session=session_id, client=client,
                         origin=origin, tool=name, principal=who.name, arg_digest=argument_digest(args), arguments=args,
                         sensitive=sensitive)
        unblock = ["call the tool again; the user is asked afresh"]
        refusal = Refused(reason=f"the answer was not accepted: {reason}", decision_id=rec.decision_id,
                          decision=AnswerNotAccepted(reason=reason, unmet=["answer_refused"], how_to_unblock=unblock))
        try:
            await rec.final("deny", "answer_refused", reason=reason)
        except StorageError as e:
            return refusal.model_copy(update={"reason": f"{refusal.reason}; {storage_refusal(e)}",
                                              "decision_id": None})
        return refusal

    # ------------------------------------------------------------------ the pipeline
    @traced(lambda self, name, *a, origin="client", **k: "sentinel.fetch" if origin == "solver" else "sentinel.call",
            lambda self, name, *a, session_id, origin="client", client=None, **k: {
                "sentinel.tool": name, "sentinel.origin": origin, "sentinel.session": session_id,
                "sentinel.client": client})
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
    ) -> InvokeOutcome | UpstreamNeedsInput:
        who = self.principal_for(principal, session_id, origin)
        rec = CallRecord(self.audit, self.guard.version, self.observers, session=session_id, client=client,
                         origin=origin, tool=name, principal=who.name)
        if self.draining and depth == 0:
            return Refused(reason="Sentinel is shutting down; call again once it is back")
        problem = await self.records.problem()  # a store that cannot be written refuses everything (fail closed)
        if problem is not None:
            return Refused(reason=problem)
        self.inflight += 1
        # a policy fetch's time counts for the call whose decision needed it (``call_timings``)
        parent = call_timings.current() if origin == "solver" else None
        started = call_timings.now()
        token = call_timings.enter(rec.timings)
        try:
            return await self._run(rec, who, name, arguments, answers=answers, depth=depth, progress=progress,
                                   link=link, upstream_input=upstream_input, upstream_state=upstream_state,
                                   preapproved_digest=preapproved_digest, purpose=purpose)
        except StorageError as e:  # the decision could not be recorded: nothing was forwarded
            return Refused(reason=storage_refusal(e), decision_id=rec.decision_id)
        finally:
            call_timings.leave(token)
            if parent is not None:
                parent.fetch_spans.append((started, call_timings.now()))
            self.inflight -= 1

    async def _run(self, rec: CallRecord, who: Principal, name: str, arguments: Any, *,
                   answers: dict[str, Answer] | None, depth: int, progress: ProgressFn | None,
                   link: CallerLink | None, upstream_input: dict[str, Any] | None, upstream_state: str | None,
                   preapproved_digest: str | None, purpose: str | None) -> InvokeOutcome | UpstreamNeedsInput:
        session_id, client, origin = rec.base["session"], rec.base["client"], rec.base["origin"]
        # the policy's own fetches name tools by identity (what rules bind to); everyone else by exposed name
        catalog = self.manager.catalog
        route = catalog.route(name, by_identity=True) if origin == "solver" else catalog.route(name)
        if route is None and origin == "builtin":
            route = catalog.route(name, by_identity=True)
        reachable = route is not None and (origin in ("solver", "builtin")
                                           or who.may_reach(route.upstream, route.tool))
        if route is None or not reachable:
            # a tool the caller may not reach is as unknown to it as a tool that does not exist
            await rec.final("error", "unknown_tool",
                            error="unknown tool" if route is None else f"not reachable by {who.name}")
            return Refused(reason=self._unknown_tool_message(name, who), decision_id=rec.decision_id)
        # argument names the tool declares secret: the audit log's redactor masks them in every row
        rec.base["sensitive"] = frozenset(sensitive_fields_of(route.exposed))
        problem = self._check_arguments(route.exposed, arguments)
        if problem is not None:
            # arguments of a shape past the wire limits are not kept (the record says why they were refused)
            kept = arguments if value_problem(arguments, MAX_ARGUMENT_DEPTH) is None else None
            await rec.final("error", "bad_arguments", upstream=route.upstream, error=problem, arguments=kept)
            return Refused(reason=problem, decision_id=rec.decision_id)
        up = self.manager.upstreams[route.upstream]
        ann = route.exposed.annotations
        call = ToolCall(name=name, server=route.upstream, tool=route.tool, arguments=arguments or {},
                        session_id=session_id, client=client, origin=origin, depth=depth, principal=who.name,
                        purpose=purpose,
                        read_only=ann.read_only_hint if ann else None,
                        destructive=ann.destructive_hint if ann else None,
                        self_confirming=self._self_confirming(up, route.exposed))
        rec.base.update(upstream=route.upstream, arg_digest=call.digest, arguments=call.arguments)
        if depth > MAX_DEPTH:
            await rec.final("deny", "denied", reason="nesting too deep")
            return Refused(reason=f"{name}: calls nested deeper than {MAX_DEPTH} levels are refused",
                           decision_id=rec.decision_id)

        if preapproved_digest is not None and preapproved_digest == call.digest:
            decision: Decision = Allow(reason="continuation of a call already allowed")
        else:
            started = call_timings.now()
            decision = await self._decide(call, answers or {}, route.exposed)
            rec.timings.guard_s += call_timings.now() - started
        if isinstance(decision, Deny):
            refused_answer = isinstance(decision, AnswerNotAccepted)
            await rec.final("deny", "answer_refused" if refused_answer else "denied", reason=decision.reason,
                            proof=_proof_of(decision))
            return Refused(reason=decision.reason, decision=decision, decision_id=rec.decision_id)
        if isinstance(decision, Ask):
            await rec.final("ask", "asked", reason=decision.reason,
                            proof={"questions": [q.key for q in decision.questions], "unmet": decision.unmet})
            return NeedsInput(reason=decision.reason, questions=decision.questions, decision_id=rec.decision_id)

        await rec.decided(reason=decision.reason, proof=_proof_of(decision))  # on disk before the call leaves
        return await self._forward(rec, who, call, route, up, decision, link=link, progress=progress,
                                   upstream_input=upstream_input, upstream_state=upstream_state)

    async def _forward(self, rec: CallRecord, who: Principal, call: ToolCall, route: Any, up: Any,
                       decision: Decision, *, link: CallerLink | None, progress: ProgressFn | None,
                       upstream_input: dict[str, Any] | None,
                       upstream_state: str | None) -> InvokeOutcome | UpstreamNeedsInput:
        name = call.name

        async def done(outcome: str, result: CallToolResult, **kw: Any) -> Completed:
            """The outcome on disk before the answer leaves; if it cannot be, the answer says so."""
            try:
                await rec.finished(outcome, reason=decision.reason, **kw)
            except StorageError as e:
                return Completed(result=rec.stamp(error_result(
                    f"{name} ran, but Sentinel could not record its outcome, so the result is withheld: {e}",
                    error="audit_unavailable")))
            return Completed(result=rec.stamp(result))

        meta = call_meta(rec.base["session"], rec.base["client"], rec.base["origin"], who.name,
                         can_sample=bool(getattr(link, "relays_sampling", False)),
                         decision_id=rec.decision_id) \
            if isinstance(up.target, BuiltinTarget) else None
        started = call_timings.now()
        if self.person_inbox is not None and call.origin in PERSON_ORIGINS and not reaches_person(link):
            # nobody behind this call can be asked: the upstream's own questions go to the console inbox
            link = PersonLink(link, self, who.name, call)
        try:
            result = await up.call_tool(call.tool, call.arguments, link=link, progress=progress,
                                        input_responses=upstream_input, request_state=upstream_state, meta=meta)
            rounds = 0
            while isinstance(result, InputRequiredResult) and link is not None and getattr(link, "can_push", False):
                rounds += 1
                if rounds > MAX_UPSTREAM_INPUT_ROUNDS:
                    raise UpstreamCallError(f"upstream {up.name} kept asking for input ({rounds} rounds)")
                asked = call_timings.now()
                responses = await self._answer_upstream_push(link, result)
                rec.timings.ask_s += call_timings.now() - asked
                started += call_timings.now() - asked  # the person's time is not the upstream's
                if not isinstance(responses, dict):
                    why = responses or "the upstream asked for input that Sentinel cannot relay to this client"
                    return await done("tool_error", error_result(f"{name}: {why}"),
                                      proof=_proof_of(decision), error=why)
                result = await up.call_tool(call.tool, call.arguments, link=link, progress=progress,
                                            input_responses=responses, request_state=result.request_state, meta=meta)
        except UpstreamUnavailable as e:
            rec.timings.forward_s += call_timings.now() - started
            return await done("upstream_error", error_result(str(e), error="upstream_unavailable", upstream=up.name),
                              error=str(e))
        except UpstreamCallError as e:
            rec.timings.forward_s += call_timings.now() - started
            kind = "timeout" if e.timeout else "upstream_error"
            return await done(kind, error_result(str(e), error=kind, upstream=up.name), error=str(e))
        except anyio.get_cancelled_exc_class():
            rec.timings.forward_s += call_timings.now() - started
            with anyio.CancelScope(shield=True):
                try:
                    await rec.finished("cancelled", reason=decision.reason, error="cancelled by the caller")
                except StorageError:
                    pass  # the decision row stays, with outcome "forwarded": the record says it never finished
            raise
        rec.timings.forward_s += call_timings.now() - started
        if isinstance(result, InputRequiredResult):
            try:
                await rec.finished("asked", reason="upstream asks for input", proof=_proof_of(decision))
            except StorageError as e:
                return Completed(result=error_result(storage_refusal(e), error="audit_unavailable"))
            return UpstreamNeedsInput(result=result, call=call)
        source = untrusted_source(route.exposed, call.identity, self.config.sentinel.untrusted, result)
        marked = mark_untrusted(result, source) if source is not None else result
        # the guard learns from the result (facts store) while the outcome row is committed (audit log): two
        # files, two fsyncs, in parallel instead of one after the other; both are done before the answer leaves
        async def learn() -> None:
            try:
                await self.guard.observe(call, result)
            except Exception:  # noqa: BLE001 - learning facts from a result must not fail the call
                log.exception("guard could not observe the result of %s", name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(learn)
            completed = await done("tool_error" if marked.is_error else "ok", marked, proof=_proof_of(decision),
                                   error=_first_text(marked) if marked.is_error else None)
        return completed

    async def _decide_once(self, call: ToolCall, tool: Tool) -> Decision:
        decision = await self.guard.decide(call)
        if self.consent_gate is not None:
            decision = await self.consent_gate.gate(call, tool, decision)
        return decision

    async def _record(self, call: ToolCall, question: Question, answer: Answer) -> None:
        if question.meta.get("kind") == "consent":
            if self.consent_gate is not None:
                self.consent_gate.record(call, question, answer)
            return
        await self.guard.record_answer(call, question, answer)

    @traced("sentinel.guard", lambda self, call, answers, tool: {"sentinel.tool": call.name,
                                                                    "sentinel.answers": len(answers)})
    async def _decide(self, call: ToolCall, answers: dict[str, Answer], tool: Tool) -> Decision:
        """Ask the guard (and the consent gate); feed it the answers it asked for, and ask again (bounded).
        Errors deny."""
        timeout = self.config.sentinel.policy.guard_timeout
        used: set[str] = set()
        try:
            for _ in range(MAX_ASK_ROUNDS):
                with anyio.fail_after(timeout):
                    decision = await self._decide_once(call, tool)
                if not isinstance(decision, Ask):
                    return decision
                fresh = [q for q in decision.questions if q.key in answers and q.key not in used]
                if not fresh:
                    again = [q for q in decision.questions if q.key in used]
                    if again:
                        # answered (validly) and still asked: the answer did not let the call go ahead. It ends
                        # here, unremembered, rather than asking the same question in a loop
                        return Deny(reason=f"the answer to \u201c{again[0].message}\u201d did not let the call go "
                                           "ahead", unmet=[q.key for q in again],
                                    how_to_unblock=["call again to ask the user again"])
                    return decision
                # every answer is checked before any is recorded: one bad answer records nothing
                for q in fresh:
                    problem = answer_problem(q, answers[q.key])
                    if problem:
                        return AnswerNotAccepted(
                            reason=f"the answer to \u201c{q.message}\u201d was not accepted: {problem}. "
                                   "The question counts as not answered, and the call was not made.",
                            unmet=[q.key], how_to_unblock=["call the tool again and answer the question as asked"])
                declined = [q for q in fresh if not goes_ahead(q, answers[q.key])]
                if declined:
                    # a "no" ends this call only: nothing is stored, so the next call asks again
                    return Deny(reason=f"you declined: {declined[0].message}",
                                unmet=["declined"],
                                how_to_unblock=["nothing was recorded: if the user changes their mind, call the "
                                                "tool again and they will be asked again"])
                for q in fresh:
                    used.add(q.key)
                    with anyio.fail_after(timeout):
                        await self._record(call, q, answers[q.key])
            return decision
        except TimeoutError:
            return Deny(reason=f"the guard of {call.name} timed out after {timeout:.0f}s (denied)",
                        unmet=["guard_timeout"])
        except StorageError as e:  # the facts or consents it needs cannot be read or written: fail closed
            return Deny(reason=storage_refusal(e), unmet=["storage"])
        except Exception:  # noqa: BLE001 - a guard that errors denies
            ref = uuid.uuid4().hex[:10]  # internals go to the log only
            log.exception("guard error on %s (reference %s)", call.name, ref)
            return Deny(reason=f"the guard of {call.name} failed with an internal error (reference {ref} in "
                               "Sentinel's log); denied", unmet=["guard_error"])

    async def ask_person(self, *, principal: str, origin: str, session: str, client: str | None, tool: str,
                         arguments: Any, questions: list[Question], reason: str) -> dict[str, Answer] | None:
        """Questions the caller cannot be asked, put to the person in the console inbox (None: no console, or no
        answer in time). ``PersonLink`` asks through it: an upstream's questions during a call (the device's
        confirmation; the agent's steps' own questions, which the agent pushes to its caller's call)."""
        if self.person_inbox is None or not questions:
            return None
        return await self.person_inbox.ask(person=person_for(principal, origin), caller=principal, origin=origin,
                                           session=session, client=client, tool=tool, arguments=arguments,
                                           questions=questions, reason=reason)

    @staticmethod
    async def _answer_upstream_push(link: CallerLink, result: InputRequiredResult) -> dict[str, Any] | str | None:
        """A 2026-era upstream's input requests asked of a handshake-era client: the replies, or why there are
        none (a refusal's message; None when one cannot be relayed at all)."""
        answers: dict[str, Any] = {}
        for key, req in (result.input_requests or {}).items():
            if isinstance(req, ElicitRequest):
                answer: Any = await link.elicit(req.params)
            elif isinstance(req, CreateMessageRequest):
                answer = await link.sample(req.params)
            elif isinstance(req, ListRootsRequest):
                answer = await link.list_roots()
            else:
                return None
            if isinstance(answer, ErrorData):  # not relayed, or a reply that did not fit the question
                log.info("input request %s not relayed: %s", key, answer.message)
                return answer.message
            answers[key] = answer
        return answers

    def self_confirming(self, name: str) -> bool:
        """Whether calls to the catalog tool ``name`` are left to its trusted built-in's own confirmation."""
        route = self.manager.catalog.route(name)
        up = self.manager.upstreams.get(route.upstream) if route else None
        return bool(route and up and self._self_confirming(up, route.exposed))

    def _self_confirming(self, up: Any, tool: Tool) -> bool:
        """A trust decision, not a claim: only a built-in Sentinel mounted itself, named in the config's trust
        list, may let its own confirmation replace the gateway's; a configured upstream's ``_meta`` counts for
        nothing (it is never a ``BuiltinTarget``)."""
        return (isinstance(up.target, BuiltinTarget) and up.name in self.config.sentinel.builtins
                and up.name in self.config.sentinel.policy.self_confirming and declares_self_confirming(tool.meta))

    def _unknown_tool_message(self, name: str, principal: Principal) -> str:
        import difflib

        names = [t.name for t in self.list_catalog_tools(principal)]
        close = difflib.get_close_matches(name, names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        down = [u.name for u in self.manager.upstreams.values() if u.state != "ready"]
        if down:
            hint += f" (not connected now: {', '.join(down)})"
        return f"unknown tool {name!r}{hint}"

    def _check_arguments(self, tool: Tool, arguments: Any) -> str | None:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return f"invalid arguments for {tool.name}: expected a JSON object, got {type(arguments).__name__}"
        shape = value_problem(arguments, MAX_ARGUMENT_DEPTH)  # before anything walks them recursively
        if shape is not None:
            return f"invalid arguments for {tool.name}: {shape}"
        size = len(json.dumps(arguments, default=str))
        limit = self.config.sentinel.max_argument_bytes
        if size > limit:
            return f"arguments for {tool.name} are too large ({size} bytes > {limit})"
        validator = self._validator(tool)
        if validator is None:
            return None
        error = next(iter(validator.iter_errors(arguments)), None)
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"invalid arguments for {tool.name}: {error.message}" + (f" (at {where})" if where else "")

    def _validator(self, tool: Tool) -> Draft202012Validator | None:
        cached = self._validators.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        try:
            Draft202012Validator.check_schema(tool.input_schema)
            validator: Draft202012Validator | None = Draft202012Validator(tool.input_schema)
        except SchemaError:
            validator = None  # an upstream with a broken schema: let the upstream judge its own input
        self._validators[tool.name] = (tool, validator)
        return validator


def _proof_of(decision: Decision) -> Any:
    return getattr(decision, "proof", None)


def _first_text(result: CallToolResult) -> str | None:
    for c in result.content:
        if isinstance(c, TextContent):
            return c.text[:500]
    return None
