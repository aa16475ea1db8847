"""The HTTP routes that take JSON-RPC (``/mcp``, the legacy SSE ``/messages/``, ``/a2a``), and how a refusal
there is spelled: a JSON-RPC error object at the refusal's HTTP status, never a bare ``{"error": "..."}``.

An MCP or A2A client reads a non-2xx answer's body as JSON-RPC: given another shape, the SDK's client said
only "Server returned an error response" and dropped why (a wrong token, a refused Host). The id is the
request's when it was read safely (parsed by ``WireGuard`` and left in the scope), else null: a caller check
refuses before any body is read, and a stranger's body is never read to echo its id.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Scope

from sentinel_mcp.core.wire_limits import INVALID_REQUEST

MESSAGE_KEY = "sentinel.message"  # the parsed request WireGuard leaves in the scope
MAX_MESSAGE_CHARS = 300  # of a refusal's text


def json_rpc_door(path: str) -> bool:
    """``path`` is a route whose requests are JSON-RPC messages."""
    return path == "/mcp" or path == "/a2a" or path.startswith("/messages/") or path == "/messages"


def json_rpc_client_route(path: str) -> bool:
    """``path`` is a route whose clients read a refusal as JSON-RPC: a door, or the legacy SSE stream (its
    events are JSON-RPC messages; its GET carries none)."""
    return json_rpc_door(path) or path == "/sse"


def request_id(scope: Scope) -> Any:
    """The id of the request being answered, when it was parsed and checked already (else None)."""
    msg = scope.get(MESSAGE_KEY)
    return msg.get("id") if isinstance(msg, dict) and "method" in msg else None


def refusal_body(message: str, mid: Any = None, code: int = INVALID_REQUEST) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": mid,
                       "error": {"code": code, "message": message[:MAX_MESSAGE_CHARS]}}).encode()
