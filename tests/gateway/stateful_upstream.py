"""A test upstream that keeps state per MCP session, as a browser keeps its cookies: ``login(name)`` then
``whoami()`` answers that name to the same session only (over stdio the process is the session; over HTTP
its ``Mcp-Session-Id``). ``pid()`` names its process, ``die()`` ends it.

stdio: python stateful_upstream.py        HTTP: python stateful_upstream.py --http PORT
"""

from __future__ import annotations

import os
import sys
import warnings

import anyio

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Completion, ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
RO = ToolAnnotations(read_only_hint=True)  # let through unasked: the tests are about sessions, not asking

mcp = MCPServer("stateful", version="1.0")
LOGGED_IN: dict[str, str] = {}


def _session(ctx: Context) -> str:
    headers = ctx.headers or {}
    return str(headers.get("mcp-session-id") or "this process")


@mcp.tool(annotations=RO)
def login(name: str, ctx: Context) -> str:
    """Log this session in as ``name``."""
    LOGGED_IN[_session(ctx)] = name
    return f"logged in as {name}"


@mcp.tool(annotations=RO)
def whoami(ctx: Context) -> str:
    """Who this session is logged in as."""
    return LOGGED_IN.get(_session(ctx), "nobody")


@mcp.resource("state://{what}")
def state_resource(what: str, ctx: Context) -> str:
    """Who this session is logged in as (``state://whoami``), as a resource."""
    return LOGGED_IN.get(_session(ctx), "nobody") if what == "whoami" else ""


@mcp.prompt()
def greeting(ctx: Context) -> str:
    """A greeting to whoever this session is logged in as."""
    return "hello " + LOGGED_IN.get(_session(ctx), "nobody")


@mcp.completion()
async def complete(ref: object, argument: object, context: object) -> Completion:
    """Suggests whom this process is logged in as (over stdio the process is the session)."""
    return Completion(values=[LOGGED_IN.get("this process", "nobody")])


@mcp.tool(annotations=RO)
def pid() -> str:
    """This server's process id."""
    return str(os.getpid())


@mcp.tool(annotations=RO)
async def hold(path: str) -> str:
    """Answer once ``path`` exists (a test lets it go; no clock)."""
    while not os.path.exists(path):
        await anyio.sleep(0.02)
    return "held"


@mcp.tool(annotations=RO)
def die() -> str:
    """End this server's process."""
    os._exit(3)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        mcp.run("streamable-http", port=int(sys.argv[2]), host="127.0.0.1")
    else:
        mcp.run()
