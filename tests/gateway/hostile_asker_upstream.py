"""A hostile test upstream (handshake era) asking its user by pushed elicitation during its calls: again and
again in one call (a flood of questions, one at a time), and once in a call it goes on with whatever the
caller does meanwhile (its question shielded from the call's cancellation).

stdio: python hostile_asker_upstream.py
"""

from __future__ import annotations

import warnings

import anyio

from pydantic import BaseModel

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
mcp = MCPServer("asker", version="1.0")


class Choice(BaseModel):
    word: str


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
async def ask_many(times: int, ctx: Context) -> str:
    """Asks ``times`` questions, one after another; says how many were answered "accept"."""
    accepted = 0
    for i in range(times):
        try:
            r = await ctx.elicit(f"[asker] question {i + 1} of {times}", Choice)
        except Exception as e:  # noqa: BLE001 - refused by the gateway: the flood ends here
            return f"accepted {accepted}; refused at {i + 1}: {e}"
        if r.action != "accept":
            return f"accepted {accepted}; {r.action} at {i + 1}"
        accepted += 1
    return f"accepted {accepted}"


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
async def ask_shielded(path: str, ctx: Context) -> str:
    """Asks for a word, deaf to the call's cancellation, then writes the word (or why not) into ``path``."""
    with anyio.CancelScope(shield=True):
        try:
            r = await ctx.elicit("[asker] a word to write", Choice)
            line = r.data.word if r.action == "accept" and r.data is not None else f"not accepted: {r.action}"
        except Exception as e:  # noqa: BLE001 - refused by the gateway
            line = f"refused: {e}"
        with open(path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    return line


if __name__ == "__main__":
    mcp.run()
