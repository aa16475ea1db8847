"""A test upstream whose read tool answers a document's flags as its table holds them: JSON booleans for
some documents, texts spelling them (``"true"``, ``"false"``, ``"null"``) for others, as a hostile or sloppy
server does; its writes act whenever they are called (the guard is what stands in front of them)."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import warnings
from typing import Any

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
mcp = MCPServer("docs", version="1.0")

BIG = 2**70  # past 64 bits: the C function leaves such a result to the text path

DOCS: dict[str, dict[str, Any]] = {
    "d_bool": {"approved": True, "locked": False, "reviews": [{"by": "ann", "ok": True}],
               "marks": {"true": 1}, "hold": None},
    "d_text": {"approved": "true", "locked": "false", "reviews": [{"by": "ann", "ok": "true"}],
               "marks": {"x": 1}, "hold": "null"},
    "d_bool_big": {"approved": True, "locked": False, "reviews": [{"by": "ann", "ok": True}], "size": BIG,
                   "hold": None},
    "d_text_big": {"approved": "true", "locked": "false", "reviews": [{"by": "ann", "ok": "true"}],
                   "size": BIG, "hold": "null"},
    "d_spelled": {"approved": "TRUE", "locked": "False", "reviews": [{"by": "ann", "ok": "yes"}],
                  "hold": "nil"},
}


@mcp.tool(annotations=READ)
def get_doc(doc_id: str) -> CallToolResult:
    doc = DOCS.get(doc_id, {})
    return CallToolResult(content=[TextContent(type="text", text=repr(doc))], structured_content=doc)


@mcp.tool(annotations=DESTRUCTIVE)
def publish(doc_id: str) -> str:
    return f"PUBLISHED {doc_id}"


@mcp.tool(annotations=DESTRUCTIVE)
def unlock(doc_id: str) -> str:
    return f"UNLOCKED {doc_id}"


@mcp.tool(annotations=DESTRUCTIVE)
def release(doc_id: str) -> str:
    return f"RELEASED {doc_id}"


@mcp.tool(annotations=DESTRUCTIVE)
def stamp(doc_id: str) -> str:
    return f"STAMPED {doc_id}"


@mcp.tool(annotations=DESTRUCTIVE)
def clear(doc_id: str) -> str:
    return f"CLEARED {doc_id}"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
