"""An upstream that asks the user to fill in the form its caller gives (``ask_form``'s ``schema``): by push on
the handshake era; as an input request (``InputRequiredResult``) on 2026-07-28 (``--modern-only``). Its answer
says what came back, so a test sees what the upstream learned.

python form_upstream.py [--modern-only]
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import sys
import warnings

import anyio
from mcp import MCPDeprecationWarning
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
TOOLS = [Tool(name="ask_form", description="asks the user to fill in a form",
              input_schema={"type": "object", "properties": {"schema": {"type": "object"},
                                                            "message": {"type": "string"}}},
              annotations=ToolAnnotations(read_only_hint=True))]


def _text(value: str, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)], is_error=error)


def _answered(result: object) -> CallToolResult:
    answer = ElicitResult.model_validate(result) if isinstance(result, dict) else result
    assert isinstance(answer, ElicitResult)
    return _text(f"{answer.action}:{json.dumps(answer.content, sort_keys=True)}")


def build_server() -> Server:
    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(
        ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        schema = (params.arguments or {}).get("schema") or {}
        message = str((params.arguments or {}).get("message") or "Fill in")
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            if params.input_responses and "f" in params.input_responses:
                return _answered(params.input_responses["f"])
            form = ElicitRequestFormParams(message=message, requested_schema=schema)
            return InputRequiredResult(input_requests={"f": ElicitRequest(params=form)}, request_state="r1")
        try:
            r = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except MCPError as e:
            return _text(f"refused: {e.message}", error=True)
        return _answered(r)

    return Server("former", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        server = build_server()
        if "--modern-only" in sys.argv:
            async def no_initialize(ctx: object, call_next: object) -> object:
                if getattr(ctx, "method", None) == "initialize":
                    raise MCPError(code=-32601, message="this server speaks 2026-07-28 only")
                return await call_next(ctx)  # type: ignore[operator]

            server.middleware.append(no_initialize)
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(main)
