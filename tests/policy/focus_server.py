"""A real stdio MCP server for the focus tests: whose each booking is lives in a JSON file the test may
rewrite (the world changes behind Sentinel: a booking moves to another user), a guarded transfer, a
destructive cancel that records what it cancelled. Run as ``python focus_server.py STATE.json``."""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
STATE = Path(sys.argv[1])


def _load() -> dict[str, Any]:
    return json.loads(STATE.read_text())


def _save(state: dict[str, Any]) -> None:
    STATE.write_text(json.dumps(state))


mcp = MCPServer("focus")


@mcp.tool(annotations=READ)
async def list_bookings(user_id: str) -> dict[str, Any]:
    """The bookings of a user."""
    owners = _load()["owners"]
    return {"user_id": user_id, "bookings": [{"id": b} for b, u in sorted(owners.items()) if u == user_id]}


@mcp.tool(annotations=WRITE)
async def transfer_booking(booking_id: str, to_user: str) -> dict[str, Any]:
    """Give a booking to another user."""
    state = _load()
    state["owners"][booking_id] = to_user
    _save(state)
    return {"id": booking_id, "owner": to_user}


@mcp.tool(annotations=WRITE)
async def cancel_booking(booking_id: str) -> dict[str, Any]:
    """Cancel a booking (recorded, so a test sees the effect)."""
    state = _load()
    state.setdefault("cancelled", []).append(booking_id)
    _save(state)
    return {"id": booking_id, "status": "cancelled"}


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    mcp.run()
