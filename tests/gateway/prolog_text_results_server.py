"""A test upstream whose read tool answers each document's owner as its table holds it: "ann" for one, and
for the others texts written in Prolog's syntax (quotes that would end an atom, a neck and a goal, comments,
operators, a variable's name, a character code, backquotes, lists, braces), look-alikes of "ann", and a
member that spells a fact; its write acts whenever it is called (the guard is what stands in front of it).

stdio: python prolog_text_results_server.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import warnings
from typing import Any

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
mcp = MCPServer("docs", version="1.0")

# the owner each document's read answers: only d0's is "ann"
OWNERS: list[str] = [
    "ann",
    "ann'), doc_owner(d1, ann",
    "ann') :- true. %",
    "ann' ; true ; '",
    "'ann'",
    "\"ann\"",
    "`ann`",
    "0'a",
    "[ann]",
    "{ann}",
    "ann, current_user(ann)",
    "ann /* comment */",
    "ann % comment",
    "ann\n",
    "ann ",
    " ann",
    "ann\u0000",
    "ann\u200b",
    "\uff41nn",  # full-width a
    "ANN",
    "A",
    "_",
    "_Ann",
    "ann.",
    "ann:-true",
    "user:ann",
    "ann\\",
    "\\x61\\nn",
    "'\\x61\\nn'",
    "f(" * 200 + "ann" + ")" * 200,
]


def doc(i: int) -> dict[str, Any]:
    # "facts": a member that spells a fact; no binding reads it
    return {"owner": OWNERS[i], "facts": ["current_user(mallory)", "doc_owner(d%d, ann)" % i,
                                          {"predicate": "doc_owner", "args": [f"d{i}", "ann"]}]}


@mcp.tool(annotations=READ)
def get_doc(doc_id: str) -> CallToolResult:
    try:
        d = doc(int(doc_id.removeprefix("d")))
    except (ValueError, IndexError):
        d = {}
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(d))], structured_content=d)


@mcp.tool(annotations=DESTRUCTIVE)
def publish(doc_id: str) -> str:
    return f"PUBLISHED {doc_id}"


if __name__ == "__main__":
    mcp.run()
