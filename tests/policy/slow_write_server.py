"""A bookings upstream whose cancel takes effect at once and answers late (``SLOW`` seconds): a caller that
gives up, or a gateway that times out, never hears that it ran. ``cancel_booking`` appends to a marker file.

STATE=path MARKER=path SLOW=seconds python slow_write_server.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

mcp = MCPServer("bk")


def _state() -> dict[str, Any]:
    with open(os.environ["STATE"], encoding="utf-8") as f:
        return json.load(f)


@mcp.tool(annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False))
async def get_booking(booking_id: str) -> dict[str, Any]:
    """One booking, as the state file says now."""
    return {"id": booking_id, "status": _state().get(booking_id, "unknown")}


@mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
async def cancel_booking(booking_id: str) -> str:
    """Cancel a booking: done at once, answered ``SLOW`` seconds later."""
    state = _state()
    state[booking_id] = "cancelled"
    with open(os.environ["STATE"], "w", encoding="utf-8") as f:
        json.dump(state, f)
    with open(os.environ["MARKER"], "a", encoding="utf-8") as f:
        f.write(booking_id + "\n")
    await asyncio.sleep(float(os.environ.get("SLOW", "0")))
    return "cancelled"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
