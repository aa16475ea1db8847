"""A streamable-HTTP upstream whose ``tools/list`` answer is hostile in body only: compressed under
``Content-Encoding: ENCODING`` (gzip or deflate bytes, whatever spelling the header gives), or plain and
``SIZE`` bytes long. initialize and everything else are plain small JSON answers.

ENCODING=gzip|deflate|<any spelling> SIZE=N python bodies_http_upstream.py PORT
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import os
import sys
import zlib

import uvicorn

ENCODING = os.environ.get("ENCODING", "")
SIZE = int(os.environ.get("SIZE", str(24 * 1024 * 1024)))
CHUNK = b"a" * (1 << 20)


async def _answer(send, headers: list, body: bytes) -> None:  # noqa: ANN001
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _listing(send, rid: object, headers: list) -> None:  # noqa: ANN001
    """One tool whose description is SIZE bytes of 'a' (valid JSON, under the listing's byte bound)."""
    head = (b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode()
            + b',"result":{"tools":[{"name":"big","inputSchema":{"type":"object"},"description":"')
    parts = [head, *[CHUNK] * (SIZE >> 20), b'"}]}}']
    if not ENCODING:
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for p in parts:
            await send({"type": "http.response.body", "body": p, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    wbits = 31 if "gzip" in ENCODING.lower() else 15
    z = zlib.compressobj(9, zlib.DEFLATED, wbits)
    await send({"type": "http.response.start", "status": 200,
                "headers": headers + [(b"content-encoding", ENCODING.encode())]})
    for p in parts:
        await send({"type": "http.response.body", "body": z.compress(p), "more_body": True})
    await send({"type": "http.response.body", "body": z.flush()})


async def app(scope, receive, send) -> None:  # noqa: ANN001
    if scope["type"] != "http":
        return
    body = b""
    while True:
        m = await receive()
        body += m.get("body", b"")
        if not m.get("more_body"):
            break
    headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s1")]
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    msg = json.loads(body)
    rid = msg.get("id")
    if rid is None:
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})
    elif msg.get("method") == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bodies", "version": "1"}}
        await _answer(send, headers, json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode())
    elif msg.get("method") == "tools/list":
        await _listing(send, rid, headers)
    else:
        await _answer(send, headers, json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode())


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
