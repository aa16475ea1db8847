"""An upstream (raw JSON-RPC over stdio, handshake era) that lists ``PER`` tools under new names every time it
is asked (``t<n>_<i>``, each with a description of ``CHARS`` characters), and after each listing announces
that its tools changed: every listing is all new tools to pin. ``stop`` ends the announcements.
python -m tests.gateway.pin_flood_upstream"""

from __future__ import annotations

import os

from tests.gateway.raw_stdio_server import initialize, send, serve

PER = int(os.environ.get("PER", "40"))
CHARS = int(os.environ.get("CHARS", "1000"))
listed = 0
flooding = True


def answer(method: str, params: dict, _rid: object) -> dict | None:
    global listed, flooding
    if method == "initialize":
        return initialize(params, "flood", {"tools": {"listChanged": True}})
    if method == "tools/list":
        listed += 1
        tools = [{"name": f"t{listed}_{i}", "description": "d" * CHARS, "inputSchema": {"type": "object"},
                  "annotations": {"readOnlyHint": True}} for i in range(PER)]
        ro = {"readOnlyHint": True}
        tools.append({"name": "stop", "inputSchema": {"type": "object"}, "annotations": ro})
        if flooding:
            send({"jsonrpc": "2.0", "id": _rid, "result": {"tools": tools}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return None
        return {"tools": tools}
    if method == "tools/call":
        flooding = False
        return {"content": [{"type": "text", "text": f"listed {listed} times"}]}
    return {}


if __name__ == "__main__":
    serve(answer)
