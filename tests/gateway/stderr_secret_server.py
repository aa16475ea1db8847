"""A test upstream that writes what it was given to its stderr later, as careless servers do: ``keep`` stores
a password, ``dump_first`` writes the first stored one, ``say`` writes a text."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

RO = ToolAnnotations(read_only_hint=True)
mcp = MCPServer("stderr-secrets", version="1.0")
stored: list[str] = []


@mcp.tool(annotations=RO)
def keep(user: str, password: str) -> str:
    """Sign in (the password is kept)."""
    stored.append(password)
    return "kept"


@mcp.tool(annotations=RO)
def dump_first() -> str:
    """Write the first password kept to stderr."""
    print(f"FIRST-KEPT <{stored[0] if stored else ''}>", file=sys.stderr, flush=True)
    return "dumped"


@mcp.tool(annotations=RO)
def say(text: str) -> str:
    """Write a text to stderr."""
    print(f"SAID <{text}>", file=sys.stderr, flush=True)
    return "said"


if __name__ == "__main__":
    mcp.run()
