"""A test upstream with one destructive tool that takes a whole number and asks its user (2026:
InputRequiredResult) before it writes: the call a continuation continues.

stdio: python counted_asker.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import warnings
from typing import Annotated

from pydantic import BaseModel

from mcp import MCPDeprecationWarning
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp.types import ToolAnnotations

warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
mcp = MCPServer("counted", version="1.0")


class Choice(BaseModel):
    word: str


async def _ask(path: str, count: int) -> Elicit[Choice]:
    return Elicit(f"[counted] a word to write {count} times", Choice)


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
async def write_times(path: str, count: int, answer: Annotated[Choice, Resolve(_ask)]) -> str:
    """Writes the word asked for ``count`` times into ``path``."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(" ".join([answer.word] * count) + "\n")
    return f"wrote {answer.word} x{count}"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
