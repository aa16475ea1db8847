"""Stands in for the llm built-in (no model on a test run): one read-only tool ``llm_generate`` that appends
what reached it to the file named by its first argument and answers a fixed text."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

LOG = sys.argv[1]
mcp = MCPServer("stand-in-llm", version="1.0")


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
def llm_generate(prompt: str, system: str = "", max_tokens: int = 64) -> str:
    """Generate text (a fixed answer)."""
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps({"prompt": prompt[-200:]}) + "\n")
    return "STAND-IN REPLY"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
