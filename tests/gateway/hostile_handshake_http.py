"""An HTTP upstream (streamable HTTP) hostile at the handshake, by the path it is reached on:

- ``/silent``: reads the request and never answers;
- ``/comments``: answers with an event stream of comments (keep-alives) that never ends;
- ``/other_id``: answers initialize under another id;
- ``/mid_event``: starts the answer's event and closes the connection in the middle of it;
- ``/small_events``: one event made of many small ``data`` lines, larger in all than any bound;
- ``/flood``: 10,000 notifications on the stream, never the answer.

A GET is answered 405 (so a test can wait for the port). python hostile_handshake_http.py PORT
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import asyncio
import json
import sys
from typing import Any

import uvicorn

MODES = ("silent", "comments", "other_id", "mid_event", "small_events", "flood")


async def app(scope: dict, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    raw = b""
    while True:
        m = await receive()
        raw += m.get("body", b"")
        if not m.get("more_body"):
            break
    try:
        rid = json.loads(raw).get("id")
    except (ValueError, AttributeError):
        rid = None
    mode = scope["path"].strip("/")
    if mode == "silent":
        await asyncio.sleep(3600)
        return
    if mode == "other_id":
        body = json.dumps({"jsonrpc": "2.0", "id": f"not-{rid}", "result": {}}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})

    async def out(chunk: bytes) -> None:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})

    if mode == "comments":
        while True:  # bounded by the client: it ends the connection
            await out(b": still here\n\n" * 50)
            await asyncio.sleep(0.01)
    elif mode == "mid_event":
        await out(b'event: message\ndata: {"jsonrpc": "2.0", "id": ' + json.dumps(rid).encode() + b', "res')
        raise RuntimeError("cut")  # uvicorn drops the connection mid-body
    elif mode == "small_events":
        for _ in range(40_000):  # 40,000 lines of 64 bytes: 2.5 MiB in one event
            await out(b"data: " + b"x" * 57 + b"\n")
        await out(b"\n")
    elif mode == "flood":
        note = b'event: message\ndata: {"jsonrpc": "2.0", "method": "notifications/message", ' \
               b'"params": {"level": "info", "data": "flood"}}\n\n'
        for _ in range(100):
            await out(note * 100)
        await asyncio.sleep(3600)
    await send({"type": "http.response.body", "body": b""})


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="critical",
                timeout_graceful_shutdown=1)
