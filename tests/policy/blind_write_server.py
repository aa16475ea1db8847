"""An upstream whose writes take effect at once and answer late (``SLOW`` seconds): a gateway that times
them out never hears that they ran. Each ``change_*`` write appends ``name o`` to the ``MARKER`` file;
``note`` answers at once.

MARKER=path SLOW=seconds python blind_write_server.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import os
from typing import Awaitable, Callable

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("u")
WRITES = ["change_once", "change_ite", "change_findall", "change_count", "change_cut", "change_chain",
          "change_neg"]


def _write(name: str) -> Callable[[str], Awaitable[str]]:
    async def write(o: str) -> str:
        with open(os.environ["MARKER"], "a", encoding="utf-8") as f:
            f.write(f"{name} {o}\n")
        await asyncio.sleep(float(os.environ.get("SLOW", "0")))
        return "changed"

    return write


WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
for _name in WRITES:
    mcp.tool(name=_name, annotations=WRITE)(_write(_name))


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
async def note(o: str) -> str:
    """Answered at once."""
    return "noted"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
