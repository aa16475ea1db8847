"""A small real MCP server for the policy tests: bookings of users, slow reads that report their own
start/end time, and a destructive cancel. Runs in-process (``create``) or over stdio (``python
bookings_server.py``)."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import time
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)


def create(delay: float = 0.0) -> tuple[MCPServer, dict[str, Any]]:
    """The server and its state (call counts, bookings) so tests can look behind it."""
    state: dict[str, Any] = {
        "calls": {},
        "delay": delay,
        "users": {"u_123": ["BK-789", "BK-456"], "u_999": ["BK-111"]},
        "bookings": {
            "BK-789": {"status": "confirmed", "cabin": "economy"},
            "BK-456": {"status": "pending", "cabin": "business"},
            "BK-111": {"status": "confirmed", "cabin": "economy"},
        },
    }
    mcp = MCPServer("bookings")

    def count(name: str) -> None:
        state["calls"][name] = state["calls"].get(name, 0) + 1

    @mcp.tool(annotations=READ)
    async def list_bookings(user_id: str) -> dict[str, Any]:
        """The bookings of a user."""
        count("list_bookings")
        return {"user_id": user_id, "bookings": [{"id": b} for b in state["users"].get(user_id, [])]}

    @mcp.tool(annotations=READ)
    async def get_booking(booking_id: str) -> dict[str, Any]:
        """One booking; sleeps ``delay`` seconds and says when it started and ended."""
        count("get_booking")
        started = time.time()
        await asyncio.sleep(state["delay"])
        b = state["bookings"].get(booking_id)
        if b is None:
            raise ValueError(f"no booking {booking_id}")
        return {"id": booking_id, **b, "started": started, "ended": time.time()}

    @mcp.tool(annotations=WRITE)
    async def cancel_booking(booking_id: str) -> dict[str, Any]:
        """Cancel a booking."""
        count("cancel_booking")
        state["bookings"][booking_id]["status"] = "cancelled"
        return {"id": booking_id, "status": "cancelled"}

    @mcp.tool(annotations=WRITE)
    async def merge_bookings(first: str, second: str) -> dict[str, Any]:
        """Merge two bookings (needs both to be known)."""
        count("merge_bookings")
        return {"merged": [first, second]}

    return mcp, state


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    server, _ = create(delay=float(__import__("os").environ.get("BOOKINGS_DELAY", "0")))
    server.run()
