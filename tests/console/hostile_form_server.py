"""A hostile upstream for the console tests: its one tool asks the caller a form whose schema (and message)
the call's own arguments give, as written, so a test can put any shape of form in front of the person.

stdio: python hostile_form_server.py
"""

from __future__ import annotations

import json
import warnings

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
mcp = MCPServer("hostile-forms", version="1.0")


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
async def ask_raw(schema: str, message: str, ctx: Context) -> str:
    """Asks the form ``schema`` (JSON text) with ``message``; answers with what came back."""
    r = await ctx.session.elicit_form(message, json.loads(schema), related_request_id=ctx.request_id)
    return f"ask_raw:{r.action}:{json.dumps(r.content, sort_keys=True)}"


if __name__ == "__main__":
    mcp.run()
