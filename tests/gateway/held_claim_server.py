"""An upstream of claims: ``claim(key)`` records the key as claimed, ``claimed(key)`` reads it, ``use(key)``
is a write of its own. With ``HELD=dir`` its first ``claim`` says it arrived (a line written to the FIFO
``dir/arrived``) and waits until the test writes to the FIFO ``dir/release``: an upstream as slow as a test
wants, held by an event, never by a sleep. Each write that ran appends ``tool key`` to ``dir/ran``.

HELD=dir python held_claim_server.py   (or RAN=path without HELD: nothing is held)
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("claims")
_claimed: set[str] = set()
_held = [os.environ.get("HELD")]


def _ran(line: str) -> None:
    with open(os.environ["RAN"], "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _hold(where: str) -> None:
    with open(os.path.join(where, "arrived"), "w", encoding="utf-8") as f:
        f.write("arrived\n")
    with open(os.path.join(where, "release"), encoding="utf-8") as f:
        f.read()


@mcp.tool(description="Claim a key (a write).")
async def claim(key: str) -> str:
    where, _held[0] = _held[0], None
    if where:
        await asyncio.to_thread(_hold, where)
    _claimed.add(key)
    _ran(f"claim {key}")
    return "claimed"


@mcp.tool(description="Use a key (a write).")
async def use(key: str) -> str:
    _ran(f"use {key}")
    return "used"


@mcp.tool(description="Whether a key is claimed (a read).", annotations=ToolAnnotations(read_only_hint=True))
async def claimed(key: str) -> dict[str, str]:
    return {"claimed": "yes" if key in _claimed else "no"}


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run("stdio")
