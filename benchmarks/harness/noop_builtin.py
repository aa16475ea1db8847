"""A no-op built-in for the capacity benchmark: one read-only tool that answers "ok" (low-level ``Server``, so
the figures measure Sentinel's pipeline, not a tool framework). Mounted by ``serve_with_noop.py``."""

from __future__ import annotations

import os
from typing import Any

from mcp.server import Server, ServerRequestContext

from sentinel_mcp.core.builtin import BuiltinTraits, declare
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

NOOP = Tool(name="noop", description="Do nothing (for benchmarks).",
            input_schema={"type": "object", "properties": {}},
            annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False))


def create_server(ctx: Any) -> Server:
    async def list_tools(_: ServerRequestContext, __: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[NOOP])

    async def call_tool(_: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="ok")])

    server = Server("bench", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    # it never asks: the gateway calls it in-task (sentinel_mcp/gateway/builtin_direct.py); BENCH_MCP_PATH=1
    # keeps it on the in-memory MCP pair, to measure what that costs
    direct = frozenset() if os.environ.get("BENCH_MCP_PATH") else frozenset({"noop"})
    return declare(server, BuiltinTraits(direct_tools=direct))
