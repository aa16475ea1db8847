"""A test upstream (handshake era; stdio, or streamable HTTP with ``--http PORT``) that keeps the log level
its client asked for, as a careful server does: ``speak`` logs one line at each of debug, info, warning and
error, and sends only those at or above the level set (every one while none is set), then answers with the
level it is at."""

from __future__ import annotations

import sys
import warnings

import anyio
from mcp import MCPDeprecationWarning
from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    EmptyResult,
    ListToolsResult,
    PaginatedRequestParams,
    SetLevelRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
SPOKEN = ["debug", "info", "warning", "error"]
TOOLS = [Tool(name="speak", description="Logs a line at each level", input_schema={"type": "object"},
              annotations=ToolAnnotations(read_only_hint=True))]


def build_server() -> Server:
    level: list[str] = []  # the level set, if one was

    async def list_tools(ctx: ServerRequestContext, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        floor = LEVELS.index(level[-1]) if level else 0
        for said in SPOKEN:
            if LEVELS.index(said) >= floor:
                await ctx.session.send_log_message(said, f"{said} line", related_request_id=ctx.request_id)
        at = level[-1] if level else "unset"
        return CallToolResult(content=[TextContent(type="text", text=at)])

    async def set_level(ctx: ServerRequestContext, params: SetLevelRequestParams) -> EmptyResult:
        level.append(params.level)
        return EmptyResult()

    return Server("leveled", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool,
                  on_set_logging_level=set_level)


if __name__ == "__main__" and sys.argv[1:2] == ["--http"]:
    import uvicorn

    uvicorn.run(build_server().streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]),
                log_level="warning")
elif __name__ == "__main__":
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        server = build_server()
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
