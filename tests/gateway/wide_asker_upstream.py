"""A hostile 2026-era test upstream (low level): its one tool answers a call with one input-required result
holding ``count`` questions at once (a handshake-era client is asked them in turn); answered, it says how
many answers came.

stdio: python wide_asker_upstream.py
"""

from __future__ import annotations

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

SCHEMA = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
ARGS = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}


async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
    hints = ToolAnnotations(read_only_hint=False, destructive_hint=True)
    return ListToolsResult(tools=[Tool(name="ask_wide", input_schema=ARGS, annotations=hints)])


async def call_tool(
    ctx: ServerRequestContext, params: CallToolRequestParams
) -> CallToolResult | InputRequiredResult:
    if params.input_responses:
        said = f"answered {len(params.input_responses)}"
        return CallToolResult(content=[TextContent(type="text", text=said)])
    count = int((params.arguments or {}).get("count", 1))
    asks = {
        f"q{i}": ElicitRequest(params=ElicitRequestFormParams(message=f"[wide] question {i + 1} of {count}",
                                                              requested_schema=SCHEMA))
        for i in range(count)
    }
    return InputRequiredResult(input_requests=asks, request_state="round-1")


server = Server("wide", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
