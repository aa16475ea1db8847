"""The toolbox upstream (toolbox_server.py) behind HTTP Basic auth, for test_upstream_basic_auth.py.

python -m tests.gateway.basic_auth_upstream PORT EXPECTED LOG: a request whose ``Authorization`` is not
exactly ``EXPECTED`` is answered 401 before the MCP server sees it. Each request is a line of ``LOG``:
``ok`` or ``refused``, its JSON-RPC method (``-`` for none: a GET, a DELETE) and its client
(``httpx`` for httpx2's User-Agent, the SDK's client; ``other`` for anything else, the lean client).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn

from tests.gateway.toolbox_server import mcp


def guarded(app: Any, expected: str, log: str) -> Any:
    async def asgi(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        body = b""
        while True:  # read whole, then replayed to the app
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            method = json.loads(body).get("method") or "-" if body else "-"
        except (ValueError, AttributeError):
            method = "-"
        ok = headers.get("authorization") == expected
        client = "httpx" if "httpx" in headers.get("user-agent", "") else "other"
        with open(log, "a") as f:
            f.write(f"{'ok' if ok else 'refused'} {method} {client}\n")
        if not ok:
            head = [(b"www-authenticate", b'Basic realm="toolbox"'), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 401, "headers": head})
            await send({"type": "http.response.body", "body": b""})
            return None
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await app(scope, replay, send)

    return asgi


if __name__ == "__main__":
    port, expected, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    app = guarded(mcp.streamable_http_app(host="127.0.0.1"), expected, log)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
