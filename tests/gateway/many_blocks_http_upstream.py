"""The toolbox over streamable HTTP (both eras, the real SDK server) with ``many_blocks_upstream``'s two
tools, whose calls are answered here as one JSON body: ``many_blocks`` ``n`` empty text blocks, ``shaped`` a
result of the ``kind`` asked for.

python -m tests.gateway.many_blocks_http_upstream PORT
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # as a program its imports build long-lived objects only: no collector passes over them

import json
import sys
from typing import Any

import uvicorn

from tests.gateway.many_blocks_upstream import ANSWERED, result_for
from tests.gateway.toolbox_server import mcp


def answering(inner: Any) -> Any:
    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await inner(scope, receive, send)
            return
        chunks = []
        while True:
            m = await receive()
            chunks.append(m.get("body", b""))
            if not m.get("more_body"):
                break
        raw = b"".join(chunks)
        try:
            msg = json.loads(raw)
        except ValueError:
            msg = None
        params = msg.get("params") if isinstance(msg, dict) and msg.get("method") == "tools/call" else None
        if isinstance(params, dict) and params.get("name") in ANSWERED:
            answer = {"jsonrpc": "2.0", "id": msg["id"],  # type: ignore[index]
                      "result": result_for(params["name"], params.get("arguments"))}
            body = json.dumps(answer).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        sent = [False]

        async def replay() -> dict:
            if not sent[0]:
                sent[0] = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await inner(scope, replay, send)

    return app


if __name__ == "__main__":
    gc.freeze()  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.enable()
    uvicorn.run(answering(mcp.streamable_http_app()), host="127.0.0.1", port=int(sys.argv[1]),
                log_level="warning", timeout_graceful_shutdown=2)
