"""The MCP front: a low-level ``Server`` that shows the catalog as its own and routes every request.

Both protocol eras: handshake-era clients get pushed elicitation and ``list_changed`` notifications;
2026-07-28 clients get ``InputRequiredResult`` round trips and ``subscriptions/listen`` events.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    GetPromptRequestParams,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    NotificationParams,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
)

from sentinel_mcp import __version__
from sentinel_mcp.gateway.call_meta import SESSION_KEY
from sentinel_mcp.gateway.core import Gateway, UpstreamNeedsInput, error_result
from sentinel_mcp.gateway.decision import Answer, Question
from sentinel_mcp.gateway.display_text import safe_question, safe_text
from sentinel_mcp.gateway.front_link import FrontLink, can_be_asked, can_elicit, can_sample, is_modern
from sentinel_mcp.gateway.held_calls import HeldCall, HeldCalls, PendingQuestion
from sentinel_mcp.gateway.input_rounds import InputRounds, RefusedRetry, wire_key
from sentinel_mcp.gateway.own_results import sentinel_result
from sentinel_mcp.gateway.port import Completed, NeedsInput, Refused
from sentinel_mcp.gateway.request_state import RequestStateSeal
from sentinel_mcp.gateway.telemetry import traced
from sentinel_mcp.gateway.front_utilities import FrontUtilities, resource_not_found
from sentinel_mcp.gateway.upstream import CallerLink, UpstreamUnavailable

log = logging.getLogger(__name__)

PAGE_SIZE = 500
INSTRUCTIONS = (
    "Sentinel governs these tools: every call is checked by a policy before it runs. A call may be allowed, "
    "denied (the result says why and what would unblock it), or need the user's answer (you will be asked, or "
    "the result lists the questions). Tools named sentinel__* query the facts and rules behind decisions."
)


class SentinelFront(Server):
    """Advertise listChanged to handshake-era clients (HTTP/in-memory call this with no arguments)."""

    def create_initialization_options(self, notification_options=None, experimental_capabilities=None,
                                      extensions=None):  # type: ignore[no-untyped-def]
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True, prompts_changed=True,
                                                        resources_changed=True),
            experimental_capabilities, extensions)


class Front:
    """Builds the front server over a ``Gateway`` and fans out catalog changes to connected clients."""

    def __init__(self, gateway: Gateway, *, default_session: str | None = None,
                 seal: RequestStateSeal | None = None) -> None:
        self.gateway = gateway
        self.default_session = default_session
        self.seal = seal or RequestStateSeal(max_age=gateway.config.sentinel.policy.confirm_ttl)
        self.rounds = InputRounds(self.seal)
        self.bus = InMemorySubscriptionBus()
        self.page_size = PAGE_SIZE
        self.held = HeldCalls(timeout=gateway.config.sentinel.policy.confirm_ttl)
        self._legacy_sessions: dict[int, Any] = {}
        self.utilities = FrontUtilities(gateway.manager, ListenHandler(self.bus), self.bus)
        u = self.utilities
        self.server = SentinelFront(
            "sentinel", version=__version__, instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools, on_call_tool=self.call_tool,
            on_list_resources=self.list_resources, on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource, on_list_prompts=self.list_prompts, on_get_prompt=self.get_prompt,
            on_subscriptions_listen=u.listen, on_subscribe_resource=u.subscribe,
            on_unsubscribe_resource=u.unsubscribe, on_completion=u.complete, on_set_logging_level=u.set_level,
        )
        self.server.add_notification_handler("notifications/initialized", NotificationParams, self._on_initialized)

    # ------------------------------------------------------------------ sessions and fan-out
    async def _on_initialized(self, ctx: ServerRequestContext, params: NotificationParams) -> None:
        self._legacy_sessions[id(ctx.session)] = ctx.session
        if len(self._legacy_sessions) > 1000:  # a dead session drops messages silently; keep the set bounded
            for key in list(self._legacy_sessions)[:100]:
                del self._legacy_sessions[key]

    async def announce_catalog_changed(self) -> None:
        for session in list(self._legacy_sessions.values()):
            try:
                await session.send_tool_list_changed()
                await session.send_prompt_list_changed()
                await session.send_resource_list_changed()
            except Exception:  # noqa: BLE001
                self._legacy_sessions.pop(id(session), None)
        for event in (ToolsListChanged(), PromptsListChanged(), ResourcesListChanged()):
            await self.bus.publish(event)

    def session_id(self, ctx: ServerRequestContext) -> str:
        meta = ctx.meta or {}
        explicit = meta.get(SESSION_KEY) if isinstance(meta, dict) else None
        if explicit:
            return str(explicit)
        request = ctx.request
        headers = getattr(request, "headers", None)
        if headers is not None and headers.get("x-sentinel-session"):
            return str(headers.get("x-sentinel-session"))
        if self.default_session:
            return self.default_session
        conn = getattr(ctx.session, "_connection", None)
        if not is_modern(ctx) and conn is not None:
            return f"http:{conn.session_id}" if getattr(conn, "session_id", None) else f"conn:{id(conn):x}"
        return f"client:{self.client_name(ctx) or 'anonymous'}"

    @staticmethod
    def client_name(ctx: ServerRequestContext) -> str | None:
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        if info is None and isinstance(ctx.meta, dict):
            raw = ctx.meta.get("io.modelcontextprotocol/clientInfo") or {}
            return f"{raw.get('name')}/{raw.get('version')}" if raw else None
        return f"{info.name}/{info.version}" if info else None

    # ------------------------------------------------------------------ tools
    async def list_tools(self, ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        tools = self.gateway.list_catalog_tools()
        start, end, cursor = _page(params, len(tools), self.page_size)
        return ListToolsResult(tools=tools[start:end], next_cursor=cursor)

    async def call_tool(self, ctx: ServerRequestContext,
                        params: CallToolRequestParams) -> CallToolResult | InputRequiredResult:
        session = self.session_id(ctx)
        client = self.client_name(ctx)
        retry = self.rounds.accept(modern=is_modern(ctx), can_elicit=can_be_asked(ctx), session=session,
                                   tool=params.name, arguments=params.arguments, version=self.gateway.guard.version,
                                   responses=params.input_responses, request_state=params.request_state)
        if isinstance(retry, RefusedRetry):
            if retry.state is not None and retry.state.get("kind") == "hold":
                self._end_held(retry.state)
            return self._refused(self.gateway.refuse_answers(params.name, params.arguments, session_id=session,
                                                             client=client, origin="client", reason=retry.reason))
        answers = dict(retry.ours)
        allowed = retry.kind == "allowed"
        preapproved = retry.state.get("digest") if allowed else None
        link = self._link(ctx, params.name, on_refused=self._answer_refused_reporter(params, session, client))

        async def progress(p: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(p, total, safe_text(message, 1000) if message else message)

        if is_modern(ctx) and can_be_asked(ctx):
            if retry.kind == "hold":
                return await self._resume_held(ctx, params, session, retry.state, retry.theirs)
            if self._needs_holding(params.name):
                async def run(held_link: CallerLink) -> Any:
                    return await self.gateway.execute(
                        params.name, params.arguments, session_id=session, client=client, origin="client",
                        answers=answers, link=held_link, progress=held_link.progress,
                        preapproved_digest=preapproved)
                call = self.held.start(params.name, session, run, relays_sampling=can_sample(ctx))
                return await self._await_held(ctx, params, session, call)

        for _round in range(4):
            outcome = await self.gateway.execute(
                params.name, params.arguments, session_id=session, client=client, origin="client",
                answers=answers, progress=progress, link=link, upstream_input=retry.theirs if allowed else None,
                upstream_state=retry.state.get("upstream") if allowed else None,
                preapproved_digest=preapproved)
            if not isinstance(outcome, NeedsInput) or not can_elicit(ctx) or is_modern(ctx):
                return self._respond(ctx, params, session, outcome)
            pushed = await self._push_questions(ctx, outcome.questions)
            if pushed is None:
                return self._blocked(outcome)
            answers = {**answers, **pushed}
        return error_result(f"sentinel: {params.name} is still blocked after the user's answers")

    def _answer_refused_reporter(self, params: CallToolRequestParams, session: str,
                                 client: str | None) -> Callable[[str], None]:
        def report(reason: str) -> None:
            self.gateway.refuse_answers(params.name, params.arguments, session_id=session, client=client,
                                        origin="client", reason=reason)
        return report

    def _respond(self, ctx: ServerRequestContext, params: CallToolRequestParams, session: str,
                 outcome: Any) -> CallToolResult | InputRequiredResult:
        """An outcome as the client gets it (a handshake client's questions are pushed by the caller instead)."""
        if isinstance(outcome, Completed):
            return outcome.result
        if isinstance(outcome, Refused):
            return self._refused(outcome)
        version = self.gateway.guard.version
        if isinstance(outcome, UpstreamNeedsInput):
            # 2026-era client: relay the upstream's questions (shown safely), and remember, once, that this
            # exact call was already allowed
            requests = {k: _safe_request(r) for k, r in (outcome.result.input_requests or {}).items()}
            state = self.rounds.issue("allowed", session=session, tool=params.name, arguments=params.arguments,
                                      version=version, asked=list(requests), schemas=_schemas(requests),
                                      upstream=outcome.result.request_state)
            return outcome.result.model_copy(update={"input_requests": requests, "request_state": state})
        assert isinstance(outcome, NeedsInput)
        if not can_elicit(ctx):
            return self._blocked(outcome)
        keys = [wire_key(q.key) for q in outcome.questions]
        return InputRequiredResult(
            input_requests={wire_key(q.key): ElicitRequest(params=ElicitRequestFormParams(
                message=q.message, requested_schema=q.requested_schema)) for q in outcome.questions},
            request_state=self.rounds.issue("ask", session=session, tool=params.name, arguments=params.arguments,
                                            version=version, asked=keys))

    def _link(self, ctx: ServerRequestContext, name: str, on_refused: Any = None) -> FrontLink:
        route = self.gateway.manager.catalog.tools.get(name)
        return FrontLink(ctx, levels=self.utilities.levels, urls=self.utilities.urls,
                         upstream=route.upstream if route is not None else None, on_refused=on_refused)

    def _needs_holding(self, name: str) -> bool:
        """Only calls to handshake-era upstreams may push questions mid-call."""
        route = self.gateway.manager.catalog.tools.get(name)
        if route is None:
            return False
        up = self.gateway.manager.upstreams.get(route.upstream)
        return up is not None and up.client is not None and not up.modern

    async def _await_held(self, ctx: ServerRequestContext, params: CallToolRequestParams, session: str,
                          call: HeldCall) -> CallToolResult | InputRequiredResult:
        call.report_progress = ctx.session.report_progress  # progress goes to the round now waiting
        event = await self.held.next_event(call)
        if isinstance(event, PendingQuestion):
            request = _safe_request(event.request)
            return InputRequiredResult(
                input_requests={event.key: request},
                request_state=self.rounds.issue("hold", session=session, tool=params.name,
                                                arguments=params.arguments, version=self.gateway.guard.version,
                                                asked=[event.key], schemas=_schemas({event.key: request}),
                                                hold=call.id))
        return self._respond(ctx, params, session, event)

    async def _resume_held(self, ctx: ServerRequestContext, params: CallToolRequestParams, session: str,
                           state: dict[str, Any], responses: dict[str, Any]) -> CallToolResult | InputRequiredResult:
        call = self.held.calls.get(str(state.get("hold")))
        if call is None or call.name != params.name or call.session != session:
            return error_result("sentinel: the held call this answer belongs to has ended; call the tool again")
        pending = call.pending
        if pending is not None:
            self.held.answer(call, responses.get(pending.key))
        return await self._await_held(ctx, params, session, call)

    def _end_held(self, state: dict[str, Any]) -> None:
        """A held call whose answer was refused: its upstream gets "cancel" instead of waiting for a timeout."""
        call = self.held.calls.get(str(state.get("hold")))
        if call is not None and call.pending is not None:
            self.held.answer(call, ElicitResult(action="cancel"))

    @traced("sentinel.ask", lambda self, ctx, questions: {"sentinel.questions": len(questions)})
    async def _push_questions(self, ctx: ServerRequestContext, questions: list[Question]) -> dict[str, Answer] | None:
        answers: dict[str, Answer] = {}
        for q in questions:
            try:
                result = await ctx.session.elicit_form(q.message, q.requested_schema, related_request_id=ctx.request_id)
            except MCPError as e:
                log.info("elicitation failed: %s", e)
                return None
            answers[q.key] = Answer(action=result.action, content=result.content, provenance="user")
            if result.action != "accept":
                break  # a declined question ends the call: asking the rest would be pointless
        return answers

    @staticmethod
    def _refused(outcome: Refused) -> CallToolResult:
        d = outcome.decision
        lines = [f"Sentinel refused this call: {outcome.reason}"]
        info: dict[str, Any] = {"decision": "deny", "reason": outcome.reason}
        if d is not None:
            if d.unmet:
                lines.append("Unmet: " + "; ".join(d.unmet))
            if d.how_to_unblock:
                lines.append("To unblock: " + "; ".join(d.how_to_unblock))
            info.update(unmet=d.unmet, how_to_unblock=d.how_to_unblock)
        shown = safe_text("\n".join(lines), 8000, keep_newlines=True)  # a reason may quote any value
        return sentinel_result(shown, **info)

    @staticmethod
    def _blocked(outcome: NeedsInput) -> CallToolResult:
        qs = [{"key": q.key, "question": q.message, "answer_schema": q.requested_schema} for q in outcome.questions]
        text = (f"Sentinel is waiting for the user: {outcome.reason}\nAsk the user: "
                + " | ".join(q.message for q in outcome.questions)
                + "\nThen record each answer with the sentinel__sentinel_answer tool (key, answer) and call again.")
        return sentinel_result(text, decision="ask", blocked=True, reason=outcome.reason, questions=qs)

    # ------------------------------------------------------------------ resources and prompts
    async def list_resources(self, ctx: ServerRequestContext,
                             params: PaginatedRequestParams | None) -> ListResourcesResult:
        items = [r for _, r in self.gateway.manager.catalog.resources.values()]
        start, end, cursor = _page(params, len(items), self.page_size)
        return ListResourcesResult(resources=items[start:end], next_cursor=cursor)

    async def list_resource_templates(self, ctx: ServerRequestContext,
                                      params: PaginatedRequestParams | None) -> ListResourceTemplatesResult:
        items = [t for _, _, t in self.gateway.manager.catalog.templates]
        start, end, cursor = _page(params, len(items), self.page_size)
        return ListResourceTemplatesResult(resource_templates=items[start:end], next_cursor=cursor)

    async def read_resource(self, ctx: ServerRequestContext, params: ReadResourceRequestParams) -> ReadResourceResult:
        name = self.gateway.manager.catalog.route_resource(params.uri)
        if name is None:
            raise resource_not_found(params.uri)
        try:
            return await self.gateway.manager.upstreams[name].read_resource(params.uri)
        except UpstreamUnavailable as e:
            raise MCPError(code=-32603, message=str(e)) from None

    async def list_prompts(self, ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListPromptsResult:
        items = [r.exposed for r in self.gateway.manager.catalog.prompts.values()]
        start, end, cursor = _page(params, len(items), self.page_size)
        return ListPromptsResult(prompts=items[start:end], next_cursor=cursor)

    async def get_prompt(self, ctx: ServerRequestContext, params: GetPromptRequestParams) -> GetPromptResult:
        route = self.gateway.manager.catalog.prompts.get(params.name)
        if route is None:
            raise MCPError(code=INVALID_PARAMS, message=f"unknown prompt: {params.name}")
        try:
            return await self.gateway.manager.upstreams[route.upstream].get_prompt(route.prompt, params.arguments)
        except UpstreamUnavailable as e:
            raise MCPError(code=-32603, message=str(e)) from None


def _page(params: PaginatedRequestParams | None, total: int, size: int) -> tuple[int, int, str | None]:
    cursor = params.cursor if params is not None else None
    try:
        start = int(cursor) if cursor else 0
    except ValueError:
        raise MCPError(code=INVALID_PARAMS, message=f"invalid cursor {cursor!r}") from None
    end = min(total, start + size)
    return start, end, (str(end) if end < total else None)


def _safe_request(request: Any) -> Any:
    """An upstream's question with its text made safe to show (its schema and key unchanged)."""
    params = getattr(request, "params", None)
    if not isinstance(params, ElicitRequestFormParams):
        return request
    text, _ = safe_question(params.message)
    return request.model_copy(update={"params": params.model_copy(update={"message": text})})


def _schemas(requests: dict[str, Any]) -> dict[str, Any]:
    return {k: r.params.requested_schema for k, r in requests.items()
            if isinstance(getattr(r, "params", None), ElicitRequestFormParams)}
