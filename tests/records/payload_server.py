"""A test upstream whose tools take any JSON value and answer with what they were given: ``keep(payload)``
answers "kept"; ``refuse(text)`` answers an error result holding ``text`` (a tool's own answer, which the
audit records as the call's error)."""

from __future__ import annotations

import warnings
from typing import Any

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
RO = ToolAnnotations(read_only_hint=True)
mcp = MCPServer("payload", version="1.0")


@mcp.tool(annotations=RO)
def keep(payload: Any) -> str:
    return "kept"


@mcp.tool(annotations=RO)
def refuse(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


if __name__ == "__main__":
    mcp.run("stdio")
