"""A test upstream whose one write takes a secret argument (by its name: ``password``), so a confirmation of
it shows the call with that value masked. stdio: python secret_argument_server.py"""

from __future__ import annotations

import warnings

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
mcp = MCPServer("secret-argument", version="1.0")


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def set_password(account: str, password: str) -> str:
    """Set an account's password (destructive)."""
    return f"password of {account} set ({len(password)} characters)"


if __name__ == "__main__":
    mcp.run()
