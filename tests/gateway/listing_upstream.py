"""An upstream whose listings are hostile (raw JSON-RPC over stdio, handshake era). ``LISTING`` picks how
``tools/list`` answers: ``endless`` (always one more page, a new cursor each time; with ``PAGES``, that many
pages in all), ``repeat`` (the same cursor again), ``fat_cursor`` (no more items, each next cursor
``CURSOR_BYTES`` long), ``fine``; after a
call of ``arm`` it answers with ``ARMED`` instead (``endless`` or ``hang``: never) and sends ``NOTICES``
list_changed notices, and for ``RENOTICE_SECONDS`` (or the next ``RENOTICE_COUNT`` listings) a notice again
after each listing it answers;
``disarm`` goes back to ``fine`` (and says so). Each ``tools/list`` it receives is a
line in ``LOG``.

python -m tests.gateway.listing_upstream
"""

from __future__ import annotations

import json
import os
import time

from tests.gateway.raw_stdio_server import initialize, send, serve


def tool(name: str) -> dict:
    return {"name": name, "description": "d" * 100, "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True}}


def listing(mode: str, cursor: str | None) -> dict | None:
    if mode == "hang":
        return None
    if mode == "fine":
        return {"tools": [tool("ping"), tool("arm"), tool("disarm")]}
    if mode == "fat_cursor":
        n = int(cursor.rstrip("c")) if cursor else 0
        fat = "c" * int(os.environ.get("CURSOR_BYTES", "3000000"))
        first = [tool("ping"), tool("arm"), tool("disarm")] if n == 0 else []
        return {"tools": first, "nextCursor": f"{n + 1}{fat}"}
    n = int(cursor) if cursor and cursor.isdigit() else 0
    first = [tool("ping"), tool("arm"), tool("disarm")] if n == 0 else []
    page = [tool(f"t{n}_{i}") for i in range(50)] + first
    if n + 1 == int(os.environ.get("PAGES", "0")):  # the last page of a finite listing
        return {"tools": page}
    return {"tools": page, "nextCursor": "again" if mode == "repeat" else str(n + 1)}


STATE: dict = {"mode": os.environ.get("LISTING", "fine"), "renotice_until": 0.0, "renotices": 0}


def answer(method: str, params: dict, rid: object) -> dict | None:
    if method == "initialize":
        return initialize(params, "lists", {"tools": {"listChanged": True}})
    if method == "tools/list":
        with open(os.environ["LOG"], "a") as log:
            log.write(json.dumps(params.get("cursor") and params["cursor"][:40]) + "\n")
        page = listing(STATE["mode"], params.get("cursor"))
        counted = STATE["renotices"] > 0
        if page is not None and (counted or time.monotonic() < STATE["renotice_until"]):
            STATE["renotices"] -= counted
            send({"jsonrpc": "2.0", "id": rid, "result": page})  # and a change again, at once, every time
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return None
        return page
    if method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}], "isError": False}
        if params.get("name") in ("arm", "disarm"):
            send({"jsonrpc": "2.0", "id": rid, "result": result})
            armed = params.get("name") == "arm"
            STATE["mode"] = os.environ.get("ARMED", "hang") if armed else "fine"
            if armed:
                STATE["renotice_until"] = time.monotonic() + float(os.environ.get("RENOTICE_SECONDS", "0"))
                STATE["renotices"] = int(os.environ.get("RENOTICE_COUNT", "0"))
            for _ in range(int(os.environ.get("NOTICES", "1")) if armed else 1):
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return None
        return result
    return {}


if __name__ == "__main__":
    serve(answer)
