"""Sentinel's own tools: an in-process MCP server (mounted as built-in ``sentinel``, guarded like any other).

Tools: ``sentinel_query``, ``sentinel_facts``, ``sentinel_bind``, ``sentinel_answer``, ``sentinel_why_not``,
``sentinel_policy_search`` (cited passages of the rulebase's policy documents), and the caller's memory:
``memory_store``, ``memory_search``, ``memory_recent`` (per principal, with a lifetime; see ``search/``).
Resources: ``sentinel://facts`` (the summary of the caller's own conversation) and ``sentinel://rulebase``.
The policy guard comes from ``ctx.services["guard"]``; the caller's session and principal from the call's
``_meta`` (set by the gateway only).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.builtin import BuiltinContext, BuiltinTraits, declare
from sentinel_mcp.core.call_meta import behind_gateway, principal_of, session_of
from sentinel_mcp.identity.principal import OWNER_NAME
from sentinel_mcp.policy.version_readers import RULEBASE_URI
from sentinel_mcp.policy.caller_resources import CallerResourceServer
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.policy_service import PolicyService
from sentinel_mcp.policy.questions import AnswerRefused
from sentinel_mcp.search.search_service import MemoryRefused
from sentinel_mcp.core.settings import NoSettings

Settings = NoSettings  # the built-in contract: its typed settings beside create_server (none)


def principal_of_call(ctx: Any) -> str:
    """Whose memory a call reads and writes: the principal the gateway established for the caller and named in
    the built-in call's ``_meta`` (a client's own ``_meta`` never reaches a built-in); standalone, the owner.
    """
    return principal_of(ctx, default=OWNER_NAME)


READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)


def _result(data: Any, text: str | None = None, error: bool = False) -> CallToolResult:
    body = text if text is not None else json.dumps(data, indent=1, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=body)],
        structured_content=data if isinstance(data, dict) else None,
        is_error=error,
    )


def _error(msg: str) -> CallToolResult:
    return _result({"error": msg}, text=msg, error=True)


def create_server(ctx: BuiltinContext) -> MCPServer:
    mcp = CallerResourceServer(
        "sentinel",
        version="1.0",
        instructions="Sentinel's policy tools: symbolic queries over established facts and contexts.",
    )

    def service(ctx_: Context | None = None) -> PolicyService:
        guard = ctx.services.guard
        if not isinstance(guard, PolicyGuard):
            raise RuntimeError("the policy engine is not active (no rulebases configured)")
        # a client's look into the policy is its principal's: personal data it has no consent for stays out
        return PolicyService(guard, principal_of(ctx_) if ctx_ is not None else None)

    @mcp.tool(annotations=READ)
    async def sentinel_query(goal: str, ctx_: Context) -> CallToolResult:
        """Prove a symbolic goal over established facts and bound contexts, e.g.
        `booking_status(booking_of_interest, S)`. Variables (capitalised) come back bound in each solution;
        missing facts are fetched through their read-only tools."""
        try:
            out = await service(ctx_).query(session_of(ctx_), goal)
        except (RuntimeError, ValueError) as e:
            return _error(str(e))
        return _result(out.model_dump(), error=out.status not in ("proved", "failed", "blocked"))

    @mcp.tool(annotations=READ)
    async def sentinel_facts(ctx_: Context) -> CallToolResult:
        """A compact summary of this session's valid facts, bound contexts and askable questions."""
        try:
            text = await service(ctx_).summary(session_of(ctx_))
        except RuntimeError as e:
            return _error(str(e))
        return _result({"summary": text}, text=text)

    @mcp.tool(annotations=WRITE)
    async def sentinel_bind(context: str, value: str, ctx_: Context) -> CallToolResult:
        """Rebind a context (the entity in focus, e.g. booking_of_interest) to a value. The rulebase's check
        for the context must hold (e.g. the booking belongs to the current user)."""
        try:
            out = await service(ctx_).bind(session_of(ctx_), context, value)
        except (RuntimeError, ValueError) as e:
            return _error(str(e))
        return _result(out)

    @mcp.tool(annotations=WRITE)
    async def sentinel_answer(
        predicate: str,
        inputs: list[str | int | float | bool],
        answer: str | int | float | bool,
        ctx_: Context,
    ) -> CallToolResult:
        """Record the answer to an askable (e.g. predicate `cancel_reason`, inputs `["ABC123"]`, answer
        `health`). The fact has provenance `agent`; questions that only the user may answer refuse it."""
        try:
            fact = await service(ctx_).answer(session_of(ctx_), predicate, list(inputs), answer,
                                              principal=principal_of_call(ctx_))
        except (RuntimeError, ValueError, AnswerRefused) as e:
            return _error(str(e))
        return _result({"recorded": fact, "provenance": "agent"})

    @mcp.tool(annotations=READ)
    async def sentinel_why_not(
        tool: str, ctx_: Context, arguments: dict[str, Any] | None = None
    ) -> CallToolResult:
        """What a tool call would need: the decision, its proof, what is missing and which questions remain
        (nothing is called except the read-only tools that establish facts)."""
        try:
            out = await service(ctx_).why_not(session_of(ctx_), tool, arguments or {})
        except RuntimeError as e:
            return _error(str(e))
        return _result(out)

    def guard() -> Any:
        g = ctx.services.guard
        if g is None or not hasattr(g, "searchable"):
            raise RuntimeError("the policy engine is not active (no rulebases configured)")
        return g

    @mcp.tool(annotations=READ)
    async def sentinel_policy_search(query: str, k: int = 3) -> CallToolResult:
        """Search the policy documents the rulebase formalises (e.g. the airline's policy.md) for the passages
        that answer a question. Each passage is cited: document, heading, line range. Use it to explain a
        decision in the policy's own words."""
        try:
            hits = await (await guard().searchable()).policy_search(query, k)
        except (RuntimeError, ValueError) as e:
            return _error(str(e))
        lines = [
            f"{h['document']} lines {h['lines'][0]}-{h['lines'][1]} ({h['heading']}): {h['text']}"
            for h in hits
        ]
        return _result({"passages": hits}, text="\n".join(lines) or "no passage found")

    @mcp.tool(annotations=WRITE)
    async def memory_store(
        text: str, ctx_: Context, tags: list[str] | None = None, ttl_seconds: float | None = None
    ) -> CallToolResult:
        """Remember a note for later conversations of the same principal (it expires: ttl_seconds, default
        30 days). Secrets (cards, codes, tokens) are redacted before it is stored."""
        try:
            out = await guard().search.memory_store(
                principal_of_call(ctx_), text, tags, ttl_seconds, now=process_clock.now()
            )
        except (RuntimeError, MemoryRefused) as e:
            return _error(str(e))
        return _result(out)

    @mcp.tool(annotations=READ)
    async def memory_search(query: str, ctx_: Context, k: int = 5) -> CallToolResult:
        """Search this principal's memories by meaning and words."""
        try:
            hits = await guard().search.memory_search(principal_of_call(ctx_), query, k)
        except RuntimeError as e:
            return _error(str(e))
        return _result({"memories": hits})

    @mcp.tool(annotations=READ)
    async def memory_recent(ctx_: Context, n: int = 10) -> CallToolResult:
        """This principal's most recent memories, newest first."""
        try:
            hits = await guard().search.memory_recent(principal_of_call(ctx_), n)
        except RuntimeError as e:
            return _error(str(e))
        return _result({"memories": hits})

    @mcp.caller_resource(
        "sentinel://facts",
        name="facts",
        mime_type="text/plain",
        description="The facts summary of the caller's own conversation (as sentinel_facts gives it).",
    )
    async def facts_resource(ctx_: Context) -> str:
        # through the gateway, the conversation it resolved for the caller and the caller's principal, both
        # from the gateway's ``_meta``: no request names another principal's session here. A read for which
        # the gateway named none shows none (never a shared one such as the CLI's ``default``)
        session = session_of(ctx_, default="") if behind_gateway(ctx_) else session_of(ctx_)
        if not session:
            return "no conversation: the facts summary is of the caller's own conversation"
        try:
            return await service(ctx_).summary(session)
        except RuntimeError as e:
            return str(e)

    @mcp.resource(RULEBASE_URI, name="rulebase", mime_type="text/x-prolog")
    async def rulebase_resource() -> str:
        """The active rulebase (all files, with its version)."""
        try:
            svc = service()
            return svc.guard.rulebases.current.text()
        except RuntimeError as e:
            return f"% {e}"

    return declare(mcp, BuiltinTraits())  # the defaults: quick calls, either era, no keys of its own
