"""An upstream whose one write tool takes an argument of every JSON type as an enum (raw JSON-RPC over stdio,
handshake era): ``set_mode``, destructive. Every call answers with the arguments it received, so a test sees
what reached the upstream.

python -m tests.policy.enum_upstream
"""

from __future__ import annotations

import json
from typing import Any

from tests.gateway.raw_stdio_server import initialize, serve

# every JSON type, and texts that spell another value ("true", "1") beside the value itself
MODES: list[Any] = [1, "1", 2.5, 3.0, True, False, None, "true", "null", "it's", {"a": 1}, [1]]
TOOLS = [{"name": "set_mode", "annotations": {"destructiveHint": True},
          "inputSchema": {"type": "object", "properties": {"mode": {"enum": MODES}}, "required": ["mode"]}}]


def answer(method: str, params: dict, _rid: object) -> dict:
    if method == "initialize":
        return initialize(params, "modes", {"tools": {}})
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "got " + json.dumps(params.get("arguments"))}],
                "isError": False}
    return {}


if __name__ == "__main__":
    serve(answer)
