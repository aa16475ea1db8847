"""An upstream whose tools are named on its command line: ``named_tools_server.py LABEL NAME...``. Each tool
answers ``LABEL:NAME``, so a test sees which server's which tool a call reached."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

LABEL, NAMES = sys.argv[1], sys.argv[2:]
mcp = MCPServer(f"named-{LABEL}")
# a write: only an allow list (or a question answered) lets it through, never the default read-only pass
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True)


def _tool(name: str) -> None:
    def run() -> str:
        return f"{LABEL}:{name}"

    mcp.tool(name=name, description=f"{LABEL}'s {name}", annotations=WRITES)(run)


for _name in NAMES:
    _tool(_name)

if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
