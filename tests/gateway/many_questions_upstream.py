"""A test upstream (handshake era) whose one tool asks its user again and again during one call, by pushed
elicitation, until a question goes unanswered or ``times`` were answered: a hostile upstream's flood of
questions, one at a time.

stdio: python many_questions_upstream.py
"""

from __future__ import annotations

import warnings

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


if __name__ == "__main__":
    mcp.run()
