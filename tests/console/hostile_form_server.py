"""A hostile upstream for the console tests: ``ask_raw`` asks the caller a form whose schema (and message)
the call's own arguments give, as written, so a test can put any shape of form in front of the person;
``ask_next`` asks a yes/no question that differs on every call with the same arguments (as the device's
"Tap 'Sign in' in Bank?" depends on the screen, not on the tap's coordinates); ``ask_wide`` asks a form too
large for a call's arguments to carry (many fields, many choices); ``price`` answers a higher price on every
read (what the policy shows in a confirmation), ``buy`` is the write it guards.

stdio: python hostile_form_server.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

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


_asked = [0]


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
async def ask_next(message: str, ctx: Context) -> str:
    """Asks ``message #n`` (n counts this server's calls) as a yes/no form; answers with n and the answer."""
    _asked[0] += 1
    n = _asked[0]
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    r = await ctx.session.elicit_form(f"{message} #{n}", form, related_request_id=ctx.request_id)
    return f"ask_next #{n}:{r.action}:{json.dumps(r.content, sort_keys=True)}"


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
async def ask_wide(fields: int, choices: int, ctx: Context) -> str:
    """Asks a yes/no form with ``fields`` optional text fields and a field ``pick`` of ``choices`` choices."""
    props: dict[str, object] = {"ok": {"type": "boolean"}}
    props["pick"] = {"type": "string", "enum": [f"c{i}" for i in range(choices)]}
    props.update({f"f{i}": {"type": "string"} for i in range(fields)})
    form = {"type": "object", "properties": props, "required": ["ok", "pick"]}
    r = await ctx.session.elicit_form("pick one", form, related_request_id=ctx.request_id)
    return f"ask_wide:{r.action}:{json.dumps(r.content, sort_keys=True)}"


_prices = [0]


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
def price(item: str) -> dict[str, int]:
    """The item's price: one more on every read."""
    _prices[0] += 1
    return {"price": _prices[0]}


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def buy(item: str) -> str:
    """Buys the item (the policy confirms it, naming the price it read)."""
    return f"bought {item} at {_prices[0]}"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
