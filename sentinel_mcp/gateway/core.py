"""The gateway core: route, validate, guard, forward, audit. Front-agnostic (MCP, A2A, solver all use it)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import anyio
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from mcp.types import (CallToolResult, ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult,
                       TextContent, Tool)
from pydantic import BaseModel, ConfigDict

from sentinel_mcp.config import Config
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.builtin import declares_self_confirming
from sentinel_mcp.gateway.call_meta import call_meta
from sentinel_mcp.gateway.decision import Allow, Answer, Ask, Decision, Deny, Guard, Origin, ToolCall
from sentinel_mcp.gateway.port import Completed, InvokeOutcome, NeedsInput, ProgressFn, Refused
from sentinel_mcp.gateway.upstream import (
    BuiltinTarget,
    CallerLink,
    UpstreamCallError,
    UpstreamUnavailable,
)
from sentinel_mcp.gateway.upstream_manager import UpstreamManager

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


def error_result(text: str, **structured: Any) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True,
                          structured_content={"sentinel": structured} if structured else None)


class Gateway:
    """Implements ``GatewayPort``: the one path every tool call takes."""

    def __init__(self, config: Config, audit: AuditLog, manager: UpstreamManager, guard: Guard) -> None:
        self.config = config
        self.audit = audit
        self.manager = manager
        self.guard = guard
        # one compiled validator per tool name, replaced when the upstream's tool changes (bounded by the catalog)
        self._validators: dict[str, tuple[Tool, Draft202012Validator | None]] = {}

    # ------------------------------------------------------------------ catalog view
    def find_tool(self, name: str) -> Tool | None:
        route = self.manager.catalog.tools.get(name)
        return route.exposed if route else None

    def list_catalog_tools(self) -> list[Tool]:
        return self.manager.catalog.tool_list()

    # ------------------------------------------------------------------ GatewayPort
    async def invoke(self, name: str, arguments: dict[str, Any] | None, *, session_id: str,
                     client: str | None = None, origin: Origin = "client", answers: dict[str, Answer] | None = None,
                     depth: int = 0, progress: ProgressFn | None = None,
                     link: CallerLink | None = None) -> InvokeOutcome:
        outcome = await self.execute(name, arguments, session_id=session_id, client=client, origin=origin,
                                     answers=answers, depth=depth, progress=progress, link=link)
        if isinstance(outcome, UpstreamNeedsInput):
            asks = [getattr(r.params, "message", "") for r in (outcome.result.input_requests or {}).values()]
            what = "; ".join(a for a in asks if a) or "input"
            return Refused(reason=f"{name} needs the device owner's answer first ({what}); it can be given "
                                  "through an MCP client of this Sentinel or its CLI, not by this caller")
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
    ) -> InvokeOutcome | UpstreamNeedsInput:
        started = time.perf_counter()
        base = dict(session=session_id, client=client, origin=origin, tool=name)

        def audit(decision: str, outcome: str, **kw: Any) -> None:
            self.audit.record(AuditEntry(**base, decision=decision, outcome=outcome,
                                         policy_version=self.guard.version,
                                         latency_ms=(time.perf_counter() - started) * 1000, **kw))

        route = self.manager.catalog.tools.get(name)
        if route is None:
            audit("error", "unknown_tool", error="unknown tool")
            return Refused(reason=self._unknown_tool_message(name))
        problem = self._check_arguments(route.exposed, arguments)
        if problem is not None:
            audit("error", "bad_arguments", upstream=route.upstream, error=problem)
            return Refused(reason=problem)
        up = self.manager.upstreams[route.upstream]
        ann = route.exposed.annotations
        call = ToolCall(name=name, server=route.upstream, tool=route.tool, arguments=arguments or {},
                        session_id=session_id, client=client, origin=origin, depth=depth,
                        read_only=ann.read_only_hint if ann else None,
                        destructive=ann.destructive_hint if ann else None,
                        self_confirming=self._self_confirming(up, route.exposed))
        base.update(upstream=route.upstream, arg_digest=call.digest, arguments=call.arguments)
        if depth > MAX_DEPTH:
            audit("deny", "denied", reason="nesting too deep")
            return Refused(reason=f"{name}: calls nested deeper than {MAX_DEPTH} levels are refused")

        if preapproved_digest is not None and preapproved_digest == call.digest:
            decision: Decision = Allow(reason="continuation of a call already allowed")
        else:
            decision = await self._decide(call, answers or {})
        if isinstance(decision, Deny):
            audit("deny", "denied", reason=decision.reason, proof=_proof_of(decision))
            return Refused(reason=decision.reason, decision=decision)
        if isinstance(decision, Ask):
            audit("ask", "asked", reason=decision.reason,
                  proof={"questions": [q.key for q in decision.questions], "unmet": decision.unmet})
            return NeedsInput(reason=decision.reason, questions=decision.questions)

        meta = call_meta(session_id, client, origin) if isinstance(up.target, BuiltinTarget) else None
        try:
            result = await up.call_tool(route.tool, call.arguments, link=link, progress=progress,
                                        input_responses=upstream_input, request_state=upstream_state, meta=meta)
            rounds = 0
            while isinstance(result, InputRequiredResult) and link is not None and getattr(link, "can_push", False):
                rounds += 1
                if rounds > MAX_UPSTREAM_INPUT_ROUNDS:
                    raise UpstreamCallError(f"upstream {up.name} kept asking for input ({rounds} rounds)")
                responses = await self._answer_upstream_push(link, result)
                if responses is None:
                    audit("allow", "tool_error", reason=decision.reason, proof=_proof_of(decision),
                          error="upstream input request cannot be relayed")
                    # nobody could answer the upstream's question (e.g. its confirmation): the call is refused
                    return Refused(reason=f"{name}: the upstream asked for an answer that nobody could give "
                                          "(the caller cannot be asked during the call); nothing was done")
                result = await up.call_tool(route.tool, call.arguments, link=link, progress=progress,
                                            input_responses=responses, request_state=result.request_state, meta=meta)
        except UpstreamUnavailable as e:
            audit("allow", "upstream_error", reason=decision.reason, error=str(e))
            return Completed(result=error_result(str(e), error="upstream_unavailable", upstream=up.name))
        except UpstreamCallError as e:
            audit("allow", "timeout" if e.timeout else "upstream_error", reason=decision.reason, error=str(e))
            return Completed(result=error_result(str(e), error="timeout" if e.timeout else "upstream_error",
                                                 upstream=up.name))
        except anyio.get_cancelled_exc_class():
            audit("allow", "cancelled", reason=decision.reason, error="cancelled by the caller")
            raise
        if isinstance(result, InputRequiredResult):
            audit("allow", "asked", reason="upstream asks for input", proof=_proof_of(decision))
            return UpstreamNeedsInput(result=result, call=call)
        observe = getattr(self.guard, "observe", None)
        if observe is not None:
            try:
                await observe(call, result)
            except Exception:  # noqa: BLE001 - learning facts from a result must not fail the call
                log.exception("guard could not observe the result of %s", name)
        audit("allow", "tool_error" if result.is_error else "ok", reason=decision.reason,
              proof=_proof_of(decision), error=_first_text(result) if result.is_error else None)
        return Completed(result=result)

    async def _decide(self, call: ToolCall, answers: dict[str, Answer]) -> Decision:
        """Ask the guard; feed it the answers it asked for, and ask again (bounded). Errors deny."""
        timeout = self.config.sentinel.policy.guard_timeout
        used: set[str] = set()
        try:
            for _ in range(MAX_ASK_ROUNDS):
                with anyio.fail_after(timeout):
                    decision = await self.guard.decide(call)
                if not isinstance(decision, Ask):
                    return decision
                fresh = [q for q in decision.questions if q.key in answers and q.key not in used]
                if not fresh:
                    return decision
                for q in fresh:
                    used.add(q.key)
                    with anyio.fail_after(timeout):
                        await self.guard.record_answer(call, q, answers[q.key])
                refused = [q for q in fresh if answers[q.key].action != "accept"]
                if refused:
                    # a declined or cancelled question ends the call; asking again would loop
                    return Deny(reason=f"the user declined: {refused[0].message}",
                                unmet=[q.key for q in refused],
                                how_to_unblock=["ask the user again if they change their mind"])
            return decision
        except TimeoutError:
            return Deny(reason=f"the guard of {call.name} timed out after {timeout:.0f}s (denied)",
                        unmet=["guard_timeout"])
        except Exception as e:  # noqa: BLE001 - a guard that errors denies
            log.exception("guard error on %s", call.name)
            return Deny(reason=f"the guard of {call.name} failed ({type(e).__name__}: {e}); denied",
                        unmet=["guard_error"])

    @staticmethod
    async def _answer_upstream_push(link: CallerLink, result: InputRequiredResult) -> dict[str, Any] | None:
        answers: dict[str, Any] = {}
        for key, req in (result.input_requests or {}).items():
            if not (isinstance(req, ElicitRequest) and isinstance(req.params, ElicitRequestFormParams)):
                return None
            answer = await link.elicit(req.params)
            if not isinstance(answer, ElicitResult):  # the person could not be asked: nothing to relay
                return None
            answers[key] = answer
        return answers

    def self_confirming(self, name: str) -> bool:
        """Whether calls to the catalog tool ``name`` are left to its trusted built-in's own confirmation."""
        route = self.manager.catalog.tools.get(name)
        up = self.manager.upstreams.get(route.upstream) if route else None
        return bool(route and up and self._self_confirming(up, route.exposed))

    def _self_confirming(self, up: Any, tool: Tool) -> bool:
        """A trust decision, not a claim: only a built-in Sentinel mounted itself, named in the config's trust
        list, may let its own confirmation replace the gateway's; a configured upstream's ``_meta`` counts for
        nothing (it is never a ``BuiltinTarget``)."""
        return (isinstance(up.target, BuiltinTarget) and up.name in self.config.sentinel.builtins
                and up.name in self.config.sentinel.policy.self_confirming and declares_self_confirming(tool.meta))

    def _unknown_tool_message(self, name: str) -> str:
        import difflib

        names = list(self.manager.catalog.tools)
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
