"""Stands in for the llm built-in and holds: ``llm_generate`` writes each prompt that reaches it to the file
named by its first argument, then answers only once ``<that file>.go`` exists (a test holds the upstream's one
slot with it, and counts the prompts that reached it)."""

from __future__ import annotations

import json
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

LOG = sys.argv[1]
mcp = MCPServer("held-llm", version="1.0")


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
def llm_generate(prompt: str, system: str = "", max_tokens: int = 64) -> str:
    """Generate text (a fixed answer, once released)."""
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps({"prompt": prompt[-200:]}) + "\n")
    for _ in range(6000):  # bounded: at most ~10 minutes
        if os.path.exists(LOG + ".go"):
            break
        time.sleep(0.1)
    return "HELD REPLY"


if __name__ == "__main__":
    mcp.run()
