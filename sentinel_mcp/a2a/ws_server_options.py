"""What the HTTP server must be told for the A2A WebSocket binding (``ws_binding.py``) to hold its bounds.

A WebSocket message is read whole by the server before the application sees it; uvicorn's own bound is
16 MiB (and a deflated message inflates to that from a few kilobytes on the wire), on each of a caller's
sockets. The binding's bound, ``max_frame_bytes``, is the server's: a message past it is not read further,
and the socket is closed with 1009 (message too big), whether it came as one frame, as fragments, or
deflated.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.a2a.settings import A2ASettings


def ws_server_options(settings: A2ASettings) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.Config``."""
    return {"ws_max_size": settings.max_frame_bytes}
