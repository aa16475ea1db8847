"""The retail example server (permissive) whose item modification is done and then never answered, for
test_retail_unknown_outcome.py:

    python -m tests.retail.unanswered_writes MARKER [STALL | error]

The write takes effect at once, the order's status stays ``pending`` (a store that does not mark a modified
order: only what the guard recorded of the write stands in the way of a second one), a line is appended to
MARKER, and the answer comes STALL seconds later (default an hour: the gateway times the call out; the
server answers one request at a time, so a shorter STALL lets a caller that gave up read again). With
``error``, the modification is refused with a tool error and nothing is written (nor marked).
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import sys
from typing import Any

from mcp.types import CallToolResult, TextContent

import examples.retail.server as server
from examples.retail.database import RetailDatabase

WRITE = "modify_pending_order_items"


def main(marker: str, stall: str = "3600") -> None:
    db = RetailDatabase.load()
    mcp = server.create_server(db, permissive=True)
    tool = mcp._tool_manager._tools[WRITE]
    done = tool.fn

    async def unanswered(**kwargs: Any) -> Any:
        if stall == "error":
            return CallToolResult(content=[TextContent(type="text", text="payment declined")], is_error=True)
        result = await done(**kwargs)
        db.order(kwargs["order_id"]).status = "pending"  # the store forgets that the items were modified
        with open(marker, "a", encoding="utf-8") as f:
            f.write(kwargs["order_id"] + "\n")
        await asyncio.sleep(float(stall))
        return result

    tool.fn = unanswered
    mcp.run("stdio")


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    main(*sys.argv[1:3])
