"""A handshake-era test upstream whose one tool asks, by pushed elicitation, for one field of each JSON type,
and runs on the answer exactly as it came: it appends the content (JSON, its types kept) to a file.

stdio: python typed_asker_server.py
"""

from __future__ import annotations

import json

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

TYPED_FORM = {
    "type": "object",
    "properties": {"flag": {"type": "boolean"}, "count": {"type": "integer"}, "ratio": {"type": "number"},
                   "label": {"type": "string"}},
    "required": ["flag", "count", "ratio", "label"],
}

mcp = MCPServer("typed-asker", version="1.0")


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
async def typed_push(path: str, ctx: Context) -> str:
    """Asks for a flag, a count, a ratio and a label; writes what it got to ``path``."""
    session = ctx.request_context.session
    r = await session.elicit_form("one of each", TYPED_FORM, related_request_id=ctx.request_id)
    if r.action != "accept":
        return f"typed:{r.action}"
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(r.content, sort_keys=True) + "\n")
    return "typed:" + json.dumps(r.content, sort_keys=True)


if __name__ == "__main__":
    mcp.run()
