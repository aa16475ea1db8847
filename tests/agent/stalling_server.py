"""A configured (stdio) upstream whose one tool never answers: a slow or hostile server holding a call open.
Each call is counted in the file named by ``STALL_LOG`` (one line per call started), so a test can see the
call began without timing it."""

from __future__ import annotations

import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("stall", version="1.0")


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False))
async def lookup(query: str) -> str:
    """Looks a note up (and never answers)."""
    with open(os.environ["STALL_LOG"], "a") as log:
        log.write("started\n")
    await anyio.sleep_forever()
    return "never"


if __name__ == "__main__":
    mcp.run("stdio")
