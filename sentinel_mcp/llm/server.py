"""The built-in ``llm`` MCP server: local inference as guarded tools.

Mounted by the gateway (``llm__llm_generate`` ...) or run alone with ``python -m sentinel_mcp.llm``.
Every Cortex error becomes a tool error with its clear text; nothing here can crash the gateway.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from sentinel_mcp.core.builtin import BuiltinContext, BuiltinTraits, declare
from sentinel_mcp.core.call_meta import client_of, decision_id_of, origin_of, principal_of, session_of
from sentinel_mcp.core.caller_checks import check_of
from sentinel_mcp.core.tool_ref import ToolRef, exposed_name
from sentinel_mcp.identity.principal import INTERNAL_NAME
from sentinel_mcp.llm.caller_check import Check
from sentinel_mcp.llm.errors import CredentialsLapsed, LlmError, ModelLoadError, ModelUnavailable
from sentinel_mcp.llm.grammar_registry import GrammarRegistry
from sentinel_mcp.llm.lazy_cortex import LazyCortex
from sentinel_mcp.llm.settings import LlmSettings
from sentinel_mcp.llm.status import model_status

if TYPE_CHECKING:
    from sentinel_mcp.llm.cortex import Cortex

Settings = LlmSettings  # the built-in contract: its typed settings beside create_server
log = logging.getLogger("sentinel.llm")


class TokenCounts(BaseModel):
    prompt: int
    completion: int


class GenerateResult(BaseModel):
    text: str
    json_: Any = Field(
        None, alias="json", description="the parsed, validated JSON when constrained, else null"
    )
    tokens: TokenCounts
    model: str
    finish_reason: str

    model_config = {"populate_by_name": True, "serialize_by_alias": True}


class ExtractResult(BaseModel):
    data: Any


class RiskResult(BaseModel):
    risk: Literal["low", "medium", "high", "critical"]
    reasons: list[str]
    requires_confirmation: bool
    source: Literal["model", "injection_detector"]


# Inference reads nothing and changes nothing outside the process: read-only, closed-world.
READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def _progress(ctx: Context):
    async def report(done: int, total: int) -> None:
        await ctx.report_progress(done, total, f"{done} tokens generated")

    return report


# an absolute path in a message (not an example after '='): shown to a caller by its last part only
_PATH = re.compile(r"(?<![\w.=])~?/(?:[^\s,;'\"()]+/)+([^\s,;'\"()]+)")


def for_caller(exc: LlmError) -> str:
    """The error as a caller is told it: why the model cannot be had names the file, not where the server
    keeps it (its home, its directories); the log keeps the whole text for the operator."""
    text = str(exc)
    if isinstance(exc, (ModelUnavailable, ModelLoadError)):
        log.warning("local model unavailable: %s", text)
        return _PATH.sub(lambda m: m.group(1), text)
    return text


def party_of(ctx: Context) -> str:
    """Whom the call is for, as the gateway established it: another built-in's own work is that built-in
    (``builtin:device``: internal users are parties of their own, and no principal's name has a colon); a
    built-in's call made for a principal (an agent run's or a build's model calls) is that principal's, as is
    any other call (``local`` when run standalone). Turns of the model are shared between parties."""
    principal = principal_of(ctx)
    if origin_of(ctx) == "builtin" and principal == INTERNAL_NAME:
        return client_of(ctx, default="builtin")
    return principal


class CallerCheck:
    """A call's credential check, taken along into the Cortex (``llm/caller_check.py``), and the one audit row
    (``credentials_lapsed``) of a call it stopped."""

    def __init__(self, builtin: BuiltinContext, call: Context, tool: str) -> None:
        self.check: Check | None = check_of(decision_id_of(call))  # None: credentials that cannot lapse
        self._builtin, self._call, self._tool = builtin, call, tool

    async def stopped(self, exc: CredentialsLapsed) -> ToolError:
        record, gateway = self._builtin.services.record_lapse, self._builtin.services.gateway
        if record is not None:
            name = self._builtin.name
            tool = exposed_name(ToolRef(name, self._tool), gateway) if gateway is not None else None
            await record(builtin=name, tool=tool or f"{name}__{self._tool}",
                         principal=principal_of(self._call), session=session_of(self._call), reason=str(exc))
        return ToolError(str(exc))


def create_server(ctx: BuiltinContext, *, cortex: Cortex | None = None) -> MCPServer:
    builtin = ctx  # (each tool's own ``ctx`` is its call's)
    settings = LlmSettings.from_section(ctx.settings, f"sentinel.{ctx.name}")
    # grammars are checked now: a broken file stops start-up with its name and the error; the Cortex itself
    # (the engine module) is built by the first call that needs it (lazy_cortex.py)
    grammars = cortex.grammars if cortex is not None else GrammarRegistry.load()
    lazy = LazyCortex(settings, grammars, built=cortex)
    if ctx.services.cortex is None:
        ctx.services.cortex = lazy  # other built-ins may call it in-process; status pages read its engine
    names = ", ".join(lazy.grammars.names())
    server = MCPServer(
        ctx.name,
        version="0.1.0",
        instructions=(
            "Local LLM inference (llama.cpp) with grammar-constrained JSON output. "
            f"Grammars: {names}. Inputs are checked for prompt injection."
        ),
    )

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "Generate text with the local model. Give `grammar` (one of: "
            + names
            + ") or `json_schema` to get "
            "validated JSON in the `json` field. `context` carries documents or screen text (escaped, up to "
            "32,000 "
            "characters); `prompt` is the request (up to 2,048 characters)."
        ),
    )
    async def llm_generate(
        prompt: str,
        ctx: Context,
        system: str | None = None,
        # strict: true is no count of tokens, "7" no number (call_parameters.py)
        max_tokens: int = Field(256, ge=1, le=32_768, strict=True),
        temperature: float = Field(0.2, ge=0.0, le=2.0, strict=True),
        grammar: str | None = None,
        json_schema: dict[str, Any] | None = None,
        context: str | None = None,
    ) -> GenerateResult:
        caller = CallerCheck(builtin, ctx, "llm_generate")
        try:
            r = await (await lazy.ready()).generate(
                prompt,
                system=system,
                context=context,
                max_tokens=max_tokens,
                temperature=temperature,
                grammar=grammar,
                json_schema=json_schema,
                progress=_progress(ctx),
                party=party_of(ctx),
                check=caller.check,
            )
        except CredentialsLapsed as exc:
            raise await caller.stopped(exc) from None
        except LlmError as exc:
            raise ToolError(for_caller(exc)) from None
        g = r.generation
        return GenerateResult(
            text=r.text,
            json=r.data,
            model=g.model,
            finish_reason=g.finish_reason,
            tokens=TokenCounts(prompt=g.prompt_tokens, completion=g.completion_tokens),
        )

    @server.tool(
        annotations=READ_ONLY,
        description="Extract structured data from `text` as JSON matching `json_schema` (validated).",
    )
    async def llm_extract(
        text: str,
        json_schema: dict[str, Any],
        ctx: Context,
        max_tokens: int = Field(512, ge=1, le=32_768, strict=True),
    ) -> ExtractResult:
        caller = CallerCheck(builtin, ctx, "llm_extract")
        try:
            r = await (await lazy.ready()).extract(
                text, json_schema, max_tokens=max_tokens, progress=_progress(ctx), party=party_of(ctx),
                check=caller.check,
            )
        except CredentialsLapsed as exc:
            raise await caller.stopped(exc) from None
        except LlmError as exc:
            raise ToolError(for_caller(exc)) from None
        return ExtractResult(data=r.data)

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "Rate the risk of a UI or tool action (low, medium, high, critical) with reasons; high and "
            "critical "
            "require confirmation. An injection attempt in the action or context is rated critical."
        ),
    )
    async def llm_classify_risk(action: dict[str, Any], ctx: Context, context: str = "") -> RiskResult:
        caller = CallerCheck(builtin, ctx, "llm_classify_risk")
        try:
            cortex = await lazy.ready()
            return RiskResult.model_validate(await cortex.classify_risk(
                action, context, progress=_progress(ctx), party=party_of(ctx), check=caller.check
            ))
        except CredentialsLapsed as exc:
            raise await caller.stopped(exc) from None
        except LlmError as exc:
            raise ToolError(for_caller(exc)) from None

    @server.tool(
        annotations=READ_ONLY,
        description=(
            "The local model's status: loaded or not, which model file, context window (tokens), threads, "
            "busy; the prompt cache and generations figures are the caller's own."
        ),
    )
    async def llm_status(ctx: Context) -> dict[str, Any]:
        return model_status(lazy.engine, party_of(ctx))  # never builds nor loads

    @server.resource(
        "llm://status",
        name="model status",
        mime_type="application/json",
        description="The local model's status (as llm_status, without any party's own figures)",
    )
    def status_resource() -> str:
        # a static resource is read without its reader's identity: the shared facts only
        return json.dumps(model_status(lazy.engine, None))

    # none of these asks its caller (progress only): the gateway calls them in-task
    # (gateway/builtin_direct.py)
    direct = frozenset({"llm_generate", "llm_extract", "llm_classify_risk", "llm_status"})
    return declare(server, BuiltinTraits(direct_tools=direct))
