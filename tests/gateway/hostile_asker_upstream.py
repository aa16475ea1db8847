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
from mcp.types import SamplingMessage, TextContent, ToolAnnotations

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
async def roots_many(times: int, ctx: Context) -> str:
    """Asks the client's roots ``times`` times, one after another; says how many came."""
    for i in range(times):
        try:
            await ctx.session.list_roots()
        except Exception as e:  # noqa: BLE001 - refused by the gateway: the flood ends here
            return f"got {i}; refused at {i + 1}: {e}"
    return f"got {times}"


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
async def sampling_many(times: int, ctx: Context) -> str:
    """Asks the client's model ``times`` times, one after another; says how many completions came."""
    for i in range(times):
        try:
            said = SamplingMessage(role="user", content=TextContent(type="text", text=f"say {i}"))
            await ctx.session.create_message([said], max_tokens=5)
        except Exception as e:  # noqa: BLE001 - refused by the gateway: the flood ends here
            return f"got {i}; refused at {i + 1}: {e}"
    return f"got {times}"


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
async def sample_huge(messages: int, chars: int, ctx: Context) -> str:
    """One sampling request of ``messages`` messages, ``chars`` characters each; what came of it."""
    said = [SamplingMessage(role="user", content=TextContent(type="text", text="x" * chars))] * messages
    try:
        r = await ctx.session.create_message(said, max_tokens=5)
    except Exception as e:  # noqa: BLE001 - refused by the gateway
        return f"refused: {e}"
    return f"answered: {getattr(r.content, 'text', '')}"


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
