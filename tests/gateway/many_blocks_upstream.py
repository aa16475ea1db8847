"""The hostile stdio upstream (both eras, the real SDK server for everything else) with two more tools whose
answers are written raw: ``many_blocks`` answers ``n`` empty text blocks (200,000 of them: ~5 MB, well within
the answer's byte bound), ``shaped`` a result of the ``kind`` asked for (nested deep, an object of many keys,
one block of a long text, the block count at the bound, two blocks).

python -m tests.gateway.many_blocks_upstream
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
from typing import Any

import anyio

from tests.gateway import hostile_stdio_upstream as hostile
from tests.gateway.toolbox_server import RO, mcp

EMPTY = {"type": "text", "text": ""}
# each kind past one bound of result_shape.py (deep, wide, long_text), or within them all (at_bound, small)
SHAPES: dict[str, Any] = {
    "deep": lambda: {"content": [EMPTY], "structuredContent": _nested(120)},
    "wide": lambda: {"content": [EMPTY], "structuredContent": {f"k{i}": i for i in range(200_001)}},
    "long_text": lambda: {"content": [{"type": "text", "text": "x" * (9 * 1024 * 1024)}]},
    "at_bound": lambda: {"content": [EMPTY] * 1000},
    "small": lambda: {"content": [{"type": "text", "text": "small ok"}, EMPTY]},
}


def _nested(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"d": value}
    return value


@mcp.tool(annotations=RO, structured_output=False)
def many_blocks(n: int = 200_000) -> str:
    """Listed, so a gateway in front routes to it; its calls are answered raw (``answer`` below)."""
    return "not reached"


@mcp.tool(annotations=RO, structured_output=False)
def shaped(kind: str) -> str:
    """Listed, as ``many_blocks``."""
    return "not reached"


ANSWERED = ("many_blocks", "shaped")


def result_for(name: str, args: Any) -> dict[str, Any]:
    args = args if isinstance(args, dict) else {}
    if name == "many_blocks":
        result: dict[str, Any] = {"content": [EMPTY] * int(args.get("n", 200_000))}
    else:
        result = SHAPES[str(args.get("kind"))]()
    result["resultType"] = "complete"  # the 2026-07-28 era's due; the handshake era's results ignore it
    return result


async def answer(wire: hostile.Wire, name: str, rid: Any, args: Any) -> None:
    await wire.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result_for(name, args)}) + "\n")


class Lines(hostile.Lines):
    """The hostile upstream's lines, the two tools' calls taken here (with their arguments)."""

    async def __anext__(self) -> str:
        while True:
            line = await super().__anext__()
            try:
                msg = json.loads(line)
            except ValueError:
                return line
            call = isinstance(msg, dict) and msg.get("method") == "tools/call"
            params = msg.get("params") if call else None
            if isinstance(params, dict) and params.get("name") in ANSWERED:
                self.tg.start_soon(answer, self.wire, params["name"], msg.get("id"), params.get("arguments"))
                continue
            return line


async def main() -> None:
    from mcp.server.stdio import stdio_server

    wire = hostile.Wire()
    server = mcp._lowlevel_server
    async with anyio.create_task_group() as tg:
        async with stdio_server(stdin=Lines(wire, tg), stdout=wire) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    anyio.run(main)
