"""A real MCP server (the SDK's ``MCPServer``, pydantic-typed parameters as most upstreams have) for the guard
attack tests: a destructive ``transfer`` and ``close_account`` whose every call is appended to the file
``$BANK_LOG`` (one JSON line: the tool and the arguments as the tool's own code received them), so a test sees
what reached the upstream, and in which Python types.

python tests/gateway/bank_upstream.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
mcp = MCPServer("bank")


def record(tool: str, **arguments: Any) -> dict[str, Any]:
    row = {"tool": tool, "arguments": arguments, "types": {k: type(v).__name__ for k, v in arguments.items()}}
    with open(os.environ["BANK_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    return row


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False))
def balance(account: int) -> dict[str, Any]:
    """The balance of ``account`` (its number times 1000, so a test tells accounts apart)."""
    record("balance", account=account)
    return {"account": account, "balance": account * 1000}


@mcp.tool(annotations=WRITE)
def transfer(account: int, amount: int, note: str = "") -> dict[str, Any]:
    """Move ``amount`` out of ``account``."""
    return record("transfer", account=account, amount=amount, note=note)


@mcp.tool(annotations=WRITE)
def close_account(account: int, force: bool = False) -> dict[str, Any]:
    """Close ``account``."""
    return record("close_account", account=account, force=force)


@mcp.tool(annotations=WRITE)
def rate(account: int, rate: float) -> dict[str, Any]:
    """Set ``account``'s rate."""
    return record("rate", account=account, rate=rate)


@mcp.tool(annotations=WRITE)
def send(account: int, to: str | None = None, flag: bool | None = None) -> dict[str, Any]:
    """Send ``account``'s statement to ``to`` (None: the account holder)."""
    return record("send", account=account, to=to, flag=flag)


@mcp.tool(annotations=WRITE)
def statement(accounts: list[int] | str) -> dict[str, Any]:
    """Mail the statements of ``accounts`` (a list, or a text naming them)."""
    return record("statement", accounts=accounts)


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run("stdio")
