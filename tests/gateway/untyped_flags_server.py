"""A test upstream whose flags are not typed in its input schema (any JSON value is valid), and that reads
them as many servers do: ``purge`` acts for real unless ``dry_run`` is the boolean true (JavaScript's
``=== true``), ``reset`` forces whenever ``force`` is truthy (Python's ``if force``; a text is truthy)."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import warnings
from typing import Any

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
mcp = MCPServer("flags", version="1.0")


@mcp.tool(annotations=DESTRUCTIVE)
def purge(path: str, dry_run: Any = None) -> str:
    return f"dry run of {path}" if dry_run is True else f"PURGED {path}"


@mcp.tool(annotations=DESTRUCTIVE)
def reset(name: str, force: Any = None) -> str:
    return f"FORCED reset of {name}" if force else f"reset of {name}"


@mcp.tool(annotations=DESTRUCTIVE)
def tag(name: str, label: Any = None) -> str:
    return f"tagged {name} {label!r}"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
