"""A bookings upstream whose answers change between reads, as the test says (a JSON file of bookings, read
on every call): a read again says something else. ``cancel_booking`` appends to a marker file, so the test
sees whether it ran.

STATE=path MARKER=path python reread_server.py
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
mcp = MCPServer("bk")


def state() -> dict[str, Any]:
    with open(os.environ["STATE"], encoding="utf-8") as f:
        return json.load(f)


@mcp.tool(annotations=READ)
async def list_bookings(user_id: str) -> dict[str, Any]:
    """The bookings of a user."""
    return {"user_id": user_id, "bookings": [{"id": b} for b in state()["users"].get(user_id, [])]}


@mcp.tool(annotations=READ)
async def get_booking(booking_id: str) -> Any:
    """One booking, as the state file says now: ``{"error": text}`` answers an error, ``{"text": text}`` a
    text that is no JSON to read, ``{"deep": n}`` the booking with its status under n levels of arrays (a
    JSON text, past any reader's depth)."""
    booking = state()["bookings"].get(booking_id, {})
    if "error" in booking:
        raise ValueError(booking["error"])
    if "text" in booking:
        return booking["text"]
    if "deep" in booking:
        n = booking["deep"]
        return '{"id": "%s", "status": "confirmed", "more": %s"x"%s}' % (booking_id, "[" * n, "]" * n)
    return {"id": booking_id, **booking}


@mcp.tool(annotations=WRITE)
async def cancel_booking(booking_id: str) -> str:
    """Cancel a booking (appends to the marker file)."""
    with open(os.environ["MARKER"], "a", encoding="utf-8") as f:
        f.write(booking_id + "\n")
    return "cancelled"


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
