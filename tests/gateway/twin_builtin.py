"""A built-in for comparing the direct path (``gateway/builtin_direct.py``) with the in-memory MCP pair: the
same server mounted twice, once with its tools declared direct, once not. Its tools echo what they received
(arguments, the request's ``_meta``), report progress and log lines, fail in each way a tool fails, declare an
output schema, and one asks its caller (push on a handshake connection). The tests name the direct tools
(``BuiltinTarget.direct_tools``; a built-in declares them as ``BuiltinTraits.direct_tools``)."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel

from sentinel_mcp.core.asking import Asker, AskUser

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
DIRECT = frozenset({"echo", "seen", "fail", "steps", "sleep"})  # "ask" asks: never declared in the comparison


class Echoed(BaseModel):
    text: str
    count: int
    tags: list[str]


def build_twin() -> MCPServer:
    server = MCPServer("twin")

    @server.tool(annotations=READ)
    async def echo(text: str, count: int = 1, tags: list[str] | None = None) -> Echoed:
        """Echo the arguments (structured, with an output schema)."""
        return Echoed(text=text, count=count, tags=tags or [])

    @server.tool(annotations=READ)
    async def seen(ctx: Context) -> dict[str, Any]:
        """The request's ``_meta`` as this tool received it."""
        return {"meta": dict(ctx.request_context.meta or {})}

    @server.tool(annotations=READ)
    async def fail(kind: str) -> str:
        """Fail in the named way."""
        if kind == "tool":
            raise ToolError(f"tool said no: {kind}")
        if kind == "mcp":
            raise MCPError(code=-32050, message="an MCP error from the tool")
        raise ValueError(f"a plain exception \u202e{kind}")

    @server.tool(annotations=READ)
    async def steps(n: int, ctx: Context) -> str:
        """Report n progress steps and a log line each."""
        for i in range(min(n, 20)):
            await ctx.report_progress(i + 1, n, f"step {i + 1}")
            await ctx.info(f"did step {i + 1}")
        return f"{n} steps"

    @server.tool(annotations=READ)
    async def sleep(seconds: float) -> str:
        """Sleep (for time limits and cancellation)."""
        await anyio.sleep(seconds)
        return "slept"

    @server.tool(annotations=READ)
    async def ask(ctx: Context) -> dict[str, Any]:
        """Ask one yes/no question by push."""
        raw = await AskUser(Asker.DEVICE, "Go on?").push(ctx, SCHEMA)
        return {"action": raw.action, "content": raw.content}

    return server


def build_lowlevel_twin() -> Server:
    """A low-level ``Server`` whose handler raises: the SDK's dispatcher shapes the error, not a framework."""
    tool = Tool(name="raise", description="Raise.", annotations=READ,
                input_schema={"type": "object", "properties": {"kind": {"type": "string"}}})

    async def list_tools(_: ServerRequestContext, __: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[tool])

    async def call_tool(_: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        kind = (params.arguments or {}).get("kind")
        if kind == "runtime":
            raise RuntimeError("kaput <script>\x1b[31m")
        if kind == "mcp":
            raise MCPError(code=-32099, message="low-level MCP error", data={"x": 1})
        if kind == "timeout":  # the handler's own, not a time limit's
            raise TimeoutError("the handler's own timeout")
        return CallToolResult(content=[TextContent(type="text", text=f"fine {kind!r}")])

    return Server("lowtwin", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
