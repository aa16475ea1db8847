"""A configured (stdio) upstream whose ``ask_next`` asks the person the next of the forms its file holds (its
first argument: a JSON list of {"message", "schema"}), a call each: an agent step's question, its words as the
test wrote them (a model's arguments are bounded and must be grounded, so they cannot carry a form).

python form_asking_server.py FORMS.json
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations

mcp = MCPServer("forms", version="1.0")
_asked = [0]


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False))
async def ask_next(ctx: Context) -> str:
    """Asks the person the next form."""
    forms = json.loads(Path(sys.argv[1]).read_text())
    form = forms[_asked[0] % len(forms)]
    _asked[0] += 1
    try:
        answer = await ctx.session.elicit_form(form["message"], form["schema"],
                                               related_request_id=ctx.request_id)
    except MCPError as e:
        return f"refused: {e.message}"
    return f"answered {answer.action}"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run("stdio")
