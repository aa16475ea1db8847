"""The MCP front: a low-level ``Server`` that shows the catalog as its own and routes every request.

Both protocol eras: handshake-era clients get pushed elicitation and ``list_changed`` notifications;
2026-07-28 clients get ``InputRequiredResult`` round trips and ``subscriptions/listen`` events.
"""

from __future__ import annotations

import logging
from typing import Any

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
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    GetPromptRequestParams,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    LoggingMessageNotificationParams,
    NotificationParams,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    TextContent,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp import __version__
from sentinel_mcp.gateway.call_meta import SESSION_KEY
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.gateway.core import Gateway, UpstreamNeedsInput, error_result
from sentinel_mcp.gateway.decision import Answer, Question
from sentinel_mcp.gateway.held_calls import HeldCall, HeldCalls, PendingQuestion
from sentinel_mcp.gateway.port import Completed, NeedsInput, Refused
from sentinel_mcp.gateway.request_state import RequestStateSeal
from sentinel_mcp.gateway.upstream import CallerLink, UpstreamUnavailable

log = logging.getLogger(__name__)

OUR_KEY_PREFIX = "sentinel."
PAGE_SIZE = 500
INSTRUCTIONS = (
    "Sentinel governs these tools: every call is checked by a policy before it runs. A call may be allowed, "
    "denied (the result says why and what would unblock it), or need the user's answer (you will be asked, or "
    "the result lists the questions). Tools named sentinel__* query the facts and rules behind decisions."
)


def is_modern(ctx: ServerRequestContext) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def can_elicit(ctx: ServerRequestContext) -> bool:
    caps = ctx.session.client_capabilities
    return bool(caps is not None and caps.elicitation is not None)


class FrontLink(CallerLink):
    """Relays what an upstream pushes during a call back to the downstream client that made it."""

    def __init__(self, ctx: ServerRequestContext) -> None:
        self.ctx = ctx

    @property
    def can_push(self) -> bool:
        return not is_modern(self.ctx) and can_elicit(self.ctx)

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        if not self.can_push or not isinstance(params, ElicitRequestFormParams):
            return ErrorData(code=-32600, message="sentinel: this client cannot be asked during the call")
        return await self.ctx.session.elicit_form(params.message, params.requested_schema,
                                                  related_request_id=self.ctx.request_id)

    async def log(self, params: LoggingMessageNotificationParams) -> None:
        try:
            await self.ctx.session.send_log_message(params.level, params.data, logger=params.logger,
                                                    related_request_id=self.ctx.request_id)
        except Exception:  # noqa: BLE001 - a log line is best effort
            log.debug("could not relay upstream log", exc_info=True)


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
        self.bus = InMemorySubscriptionBus()
        self.page_size = PAGE_SIZE
        self.held = HeldCalls(timeout=gateway.config.sentinel.policy.confirm_ttl)
        self._legacy_sessions: dict[int, Any] = {}
        self.server = SentinelFront(
            "sentinel", version=__version__, instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools, on_call_tool=self.call_tool,
            on_list_resources=self.list_resources, on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource, on_list_prompts=self.list_prompts, on_get_prompt=self.get_prompt,
            on_subscriptions_listen=ListenHandler(self.bus),
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
        link = FrontLink(ctx)
        ours, theirs = _split_responses(params.input_responses)
        sealed = self.seal.open(params.request_state)
        if params.request_state and sealed is None and ours:
            return error_result("sentinel: the answers came with an unknown or expired request state; "
                                "call the tool again to be asked afresh")
        preapproved = sealed.get("allowed") if sealed and sealed.get("name") == params.name \
            and sealed.get("session") == session else None
        # our question keys travel with a "sentinel." prefix so they never collide with an upstream's keys
        answers = {}
        for key, value in ours.items():
            answers[key] = answers[key.removeprefix(OUR_KEY_PREFIX)] = _to_answer(value)

        async def progress(p: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(p, total, message)

        if is_modern(ctx) and can_elicit(ctx):
            held_id = (sealed or {}).get("hold")
            if held_id and sealed and sealed.get("session") == session:
                return await self._resume_held(ctx, params, session, held_id, theirs)
            if self._needs_holding(params.name):
                async def run(held_link: CallerLink) -> Any:
                    return await self.gateway.execute(
                        params.name, params.arguments, session_id=session, client=client, origin="client",
                        answers=answers, link=held_link, preapproved_digest=preapproved)
                call = self.held.start(params.name, session, run)
                return await self._await_held(ctx, params, session, call)

        for _round in range(4):
            outcome = await self.gateway.execute(
                params.name, params.arguments, session_id=session, client=client, origin="client",
                answers=answers, progress=progress, link=link, upstream_input=theirs or None,
                upstream_state=(sealed or {}).get("upstream") if theirs else None,
                preapproved_digest=preapproved)
            if not isinstance(outcome, NeedsInput) or not can_elicit(ctx) or is_modern(ctx):
                return self._respond(ctx, params.name, session, outcome)
            pushed = await self._push_questions(ctx, outcome.questions)
            if pushed is None:
                return self._blocked(outcome)
            answers = {**answers, **pushed}
        return error_result(f"sentinel: {params.name} is still blocked after the user's answers")

    def _respond(self, ctx: ServerRequestContext, name: str, session: str,
                 outcome: Any) -> CallToolResult | InputRequiredResult:
        """An outcome as the client gets it (a handshake client's questions are pushed by the caller instead)."""
        if isinstance(outcome, Completed):
            return outcome.result
        if isinstance(outcome, Refused):
            return self._refused(outcome)
        if isinstance(outcome, UpstreamNeedsInput):
            # 2026-era client: relay the upstream's questions, and remember that we already allowed this call
            state = self.seal.seal({"name": name, "session": session, "allowed": outcome.call.digest,
                                    "upstream": outcome.result.request_state})
            return outcome.result.model_copy(update={"request_state": state})
        assert isinstance(outcome, NeedsInput)
        if not can_elicit(ctx):
            return self._blocked(outcome)
        return InputRequiredResult(
            input_requests={_wire_key(q.key): ElicitRequest(params=ElicitRequestFormParams(
                message=q.message, requested_schema=q.requested_schema)) for q in outcome.questions},
            request_state=self.seal.seal({"name": name, "session": session,
                                          "asked": [_wire_key(q.key) for q in outcome.questions]}))

    def _needs_holding(self, name: str) -> bool:
        """Only calls to handshake-era upstreams may push questions mid-call."""
        route = self.gateway.manager.catalog.tools.get(name)
        if route is None:
            return False
        up = self.gateway.manager.upstreams.get(route.upstream)
        return up is not None and up.client is not None and not up.modern

    async def _await_held(self, ctx: ServerRequestContext, params: CallToolRequestParams, session: str,
                          call: HeldCall) -> CallToolResult | InputRequiredResult:
        event = await self.held.next_event(call)
        if isinstance(event, PendingQuestion):
            return InputRequiredResult(
                input_requests={event.key: ElicitRequest(params=event.params)},
                request_state=self.seal.seal({"name": params.name, "session": session, "hold": call.id}))
        return self._respond(ctx, params.name, session, event)

    async def _resume_held(self, ctx: ServerRequestContext, params: CallToolRequestParams, session: str,
                           held_id: str, responses: dict[str, Any]) -> CallToolResult | InputRequiredResult:
        call = self.held.calls.get(held_id)
        if call is None or call.name != params.name:
            return error_result("sentinel: the held call this answer belongs to has ended; call the tool again")
        pending = call.pending
        if pending is not None:
            self.held.answer(call, responses.get(pending.key))
        return await self._await_held(ctx, params, session, call)

    async def _push_questions(self, ctx: ServerRequestContext, questions: list[Question]) -> dict[str, Answer] | None:
        answers: dict[str, Answer] = {}
        for q in questions:
            try:
                result = await ctx.session.elicit_form(q.message, q.requested_schema, related_request_id=ctx.request_id)
            except MCPError as e:
                log.info("elicitation failed: %s", e)
                return None
            answers[q.key] = Answer(action=result.action, content=result.content, provenance="user")
        return answers

    @staticmethod
    def _refused(outcome: Refused) -> CallToolResult:
        d = outcome.decision
        lines = [f"Sentinel refused this call: {outcome.reason}"]
        structured: dict[str, Any] = {"decision": "deny", "reason": outcome.reason}
        if d is not None:
            if d.unmet:
                lines.append("Unmet: " + "; ".join(d.unmet))
            if d.how_to_unblock:
                lines.append("To unblock: " + "; ".join(d.how_to_unblock))
            structured.update(unmet=d.unmet, how_to_unblock=d.how_to_unblock)
        return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))], is_error=True,
                              structured_content={"sentinel": structured}, _meta=_record_meta(outcome.decision_id))

    @staticmethod
    def _blocked(outcome: NeedsInput) -> CallToolResult:
        qs = [{"key": q.key, "question": q.message, "answer_schema": q.requested_schema} for q in outcome.questions]
        text = (f"Sentinel is waiting for the user: {outcome.reason}\nAsk the user: "
                + " | ".join(q.message for q in outcome.questions)
                + "\nThen record each answer with the sentinel__sentinel_answer tool (key, answer) and call again.")
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True,
                              structured_content={"sentinel": {"decision": "ask", "blocked": True,
                                                               "reason": outcome.reason, "questions": qs}},
                              _meta=_record_meta(outcome.decision_id))

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
            raise MCPError(code=INVALID_PARAMS, message=f"resource not found: {params.uri}")
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


def _record_meta(decision_id: str | None) -> dict[str, Any] | None:
    return {META_KEY: decision_id} if decision_id else None


def _page(params: PaginatedRequestParams | None, total: int, size: int) -> tuple[int, int, str | None]:
    cursor = params.cursor if params is not None else None
    try:
        start = int(cursor) if cursor else 0
    except ValueError:
        raise MCPError(code=INVALID_PARAMS, message=f"invalid cursor {cursor!r}") from None
    end = min(total, start + size)
    return start, end, (str(end) if end < total else None)


def _split_responses(responses: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    ours: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    for key, value in (responses or {}).items():
        (ours if key.startswith(OUR_KEY_PREFIX) else theirs)[key] = value
    return ours, theirs


def _wire_key(key: str) -> str:
    return key if key.startswith(OUR_KEY_PREFIX) else OUR_KEY_PREFIX + key


def _to_answer(value: Any) -> Answer:
    if isinstance(value, ElicitResult):
        return Answer(action=value.action, content=value.content, provenance="user")
    if isinstance(value, dict):
        return Answer(action=value.get("action", "cancel"), content=value.get("content"), provenance="user")
    return Answer(action="cancel", provenance="user")
