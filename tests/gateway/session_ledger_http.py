"""A streamable-HTTP upstream, written without the SDK, that keeps a ledger of its sessions: each
``initialize`` opens one (a new ``Mcp-Session-Id``), a ``DELETE`` under its id ends it. Every HTTP request it
gets is appended to the ledger file as one JSON line (``{"verb", "session", "method"}``), so a test reads
which sessions its client opened and which it ended. Its one tool, ``echo``, answers at once.
python session_ledger_http.py PORT LEDGER [switch]
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

import uvicorn

LEDGER = ""
NUMBERS = itertools.count(1)
OPEN: set[str] = set()
SWITCH = False
TOOL = {"name": "echo", "description": "Answers at once.",
        "inputSchema": {"type": "object", "properties": {}}}


def note(entry: dict[str, Any]) -> None:
    with open(LEDGER, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


async def reply(send: Any, status: int, body: Any = None, sid: str | None = None) -> None:
    raw = b"" if body is None else json.dumps(body).encode()
    headers = [(b"content-length", str(len(raw)).encode())]
    if body is not None:
        headers.append((b"content-type", b"application/json"))
    if sid is not None:
        headers.append((b"mcp-session-id", sid.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})


async def app(scope: dict, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    raw = b""
    while True:
        m = await receive()
        raw += m.get("body", b"")
        if not m.get("more_body"):
            break
    sid = dict(scope["headers"]).get(b"mcp-session-id", b"").decode() or None
    verb = scope["method"]
    msg: Any = json.loads(raw) if raw else {}
    method = msg.get("method") if isinstance(msg, dict) else None
    note({"verb": verb, "session": sid, "method": method})
    if verb == "DELETE":
        OPEN.discard(sid or "")
        await reply(send, 200 if sid else 400)
        return
    if verb != "POST":
        await reply(send, 405)
        return
    rid = msg.get("id")
    if method == "initialize":
        new = f"s{next(NUMBERS)}"
        OPEN.add(new)
        await reply(send, 200, {"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "session-ledger", "version": "1"}}}, new)
        return
    if sid not in OPEN:
        await reply(send, 404)
        return
    if rid is None:
        await reply(send, 202, sid=sid)
        return
    result: Any = {}
    if method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    # SWITCH: a call answered under a session id of another (one this upstream opened for no one)
    answered_under = "s-other" if SWITCH and method == "tools/call" else sid
    await reply(send, 200, {"jsonrpc": "2.0", "id": rid, "result": result}, answered_under)


if __name__ == "__main__":
    LEDGER, SWITCH = sys.argv[2], sys.argv[3:] == ["switch"]
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
