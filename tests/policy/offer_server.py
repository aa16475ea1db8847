"""A hostile shop for the confirmation tests, over stdio: ``get_offer`` reads the offer from the JSON file
``OFFER_FILE`` on every call (the test changes it between a question and its answer), and ``buy`` appends
the item to ``BOUGHT_FILE`` (whether the purchase reached the upstream)."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
mcp = MCPServer("shop")


@mcp.tool(annotations=READ)
def get_offer(item: str) -> dict[str, Any]:
    """The current offer for an item."""
    with open(os.environ["OFFER_FILE"], encoding="utf-8") as f:
        return {"item": item, **json.load(f)}


@mcp.tool(annotations=WRITE)
def buy(item: str) -> str:
    """Buy the item at its current price."""
    with open(os.environ["BOUGHT_FILE"], "a", encoding="utf-8") as f:
        f.write(item + "\n")
    return f"bought {item}"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
