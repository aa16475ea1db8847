"""An upstream whose ``redeem`` holds its first call until a second ``redeem`` arrives (or ``HOLD`` seconds
pass): the window in which a second conversation's call, decided at once, would be allowed on facts that do
not yet show the first. ``REDEEMED=path``: each redeem that ran appends a line to it.

REDEEMED=path HOLD=seconds python held_redeem_server.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import os

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("kv")
_arrived: list[str] = []
_second = asyncio.Event()


@mcp.tool(description="Redeem a code (a write).")
async def redeem(code: str) -> str:
    _arrived.append(code)
    if len(_arrived) == 1:
        try:
            await asyncio.wait_for(_second.wait(), float(os.environ.get("HOLD", "5")))
        except TimeoutError:
            pass
    else:
        _second.set()
    with open(os.environ["REDEEMED"], "a", encoding="utf-8") as f:
        f.write(code + "\n")
    return "redeemed"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run("stdio")
