"""An upstream whose listings are hostile (raw JSON-RPC over stdio, handshake era). ``LISTING`` picks how
``tools/list`` answers: ``endless`` (always one more page, a new cursor each time), ``repeat`` (the same
cursor again), ``fine``; after a call of ``arm`` it answers with ``ARMED`` instead (``endless`` or ``hang``:
never) and sends ``NOTICES`` list_changed notices. Each ``tools/list`` it receives is a line in ``LOG``.

python -m tests.gateway.listing_upstream
"""

from __future__ import annotations

import json
import os
import sys


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name: str) -> dict:
    return {"name": name, "description": "d" * 100, "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True}}


def listing(mode: str, cursor: str | None) -> dict | None:
    if mode == "hang":
        return None
    if mode == "fine":
        return {"tools": [tool("ping"), tool("arm")]}
    n = int(cursor) if cursor and cursor.isdigit() else 0
    page = [tool(f"t{n}_{i}") for i in range(50)] + ([tool("ping"), tool("arm")] if n == 0 else [])
    return {"tools": page, "nextCursor": "again" if mode == "repeat" else str(n + 1)}


def main() -> None:
    mode = os.environ.get("LISTING", "fine")
    log = open(os.environ["LOG"], "a", buffering=1)  # noqa: SIM115 - open for the process's life
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if rid is None:
            continue
        if method == "initialize":
            caps = {"tools": {"listChanged": True}}
            result: dict | None = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                                   "capabilities": caps, "serverInfo": {"name": "lists", "version": "1"}}
        elif method == "tools/list":
            log.write(json.dumps(params.get("cursor")) + "\n")
            result = listing(mode, params.get("cursor"))
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "pong"}], "isError": False}
            if params.get("name") == "arm":
                send({"jsonrpc": "2.0", "id": rid, "result": result})
                mode = os.environ.get("ARMED", "hang")
                for _ in range(int(os.environ.get("NOTICES", "1"))):
                    send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                continue
        else:
            result = {}
        if result is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
