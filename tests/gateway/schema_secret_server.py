"""A test upstream whose tools take ``word``, a secret only by their schema (its name says nothing): marked
``writeOnly``, ``format: password``, or listed in ``_meta["sentinel/sensitive"]``; and ``relist``, whose
tool ``declare()`` lists ``relist`` again with ``word`` ``writeOnly`` (an upstream's list_changed)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

RO = ToolAnnotations(read_only_hint=True)
mcp = MCPServer("schema-secrets", version="1.0")
WRITE_ONLY = Annotated[str, Field(json_schema_extra={"writeOnly": True})]
PASSWORD = Annotated[str, Field(json_schema_extra={"format": "password"})]


@mcp.tool(annotations=RO)
def write_only(user: str, word: WRITE_ONLY) -> str:
    """Sign in."""
    return f"welcome {user}"


@mcp.tool(annotations=RO)
def password_format(user: str, word: PASSWORD) -> str:
    """Sign in."""
    return f"welcome {user}"


def _sensitive(user: str, word: str) -> str:
    return f"welcome {user}"


mcp.add_tool(_sensitive, name="sensitive_meta", description="Sign in.", annotations=RO,
             meta={"sentinel/sensitive": ["word"]})


def _plain(user: str, word: str) -> str:
    return f"welcome {user}"


def _secret(user: str, word: WRITE_ONLY) -> str:
    return f"welcome {user}"


mcp.add_tool(_plain, name="relist", description="Sign in.", annotations=RO)


@mcp.tool(annotations=RO)
async def declare(ctx: Context) -> str:
    """List ``relist`` again, its ``word`` now writeOnly."""
    mcp.remove_tool("relist")
    mcp.add_tool(_secret, name="relist", description="Sign in.", annotations=RO)
    await ctx.session.send_tool_list_changed()
    return "declared"


if __name__ == "__main__":
    mcp.run()
