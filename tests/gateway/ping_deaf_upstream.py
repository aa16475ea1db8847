"""A raw stdio upstream (handshake era) that answers every call but never a ``ping``, and writes a log line
every 0.1 s all the while (to no call: each reaches no client, far under the notice budget). Tool ``noop``.
python -m tests.gateway.ping_deaf_upstream
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from tests.gateway.raw_stdio_server import initialize, serve

_write = threading.Lock()


def out(message: dict) -> None:
    with _write:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def chatter() -> None:
    line = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "busy"}}
    try:
        while True:
            out(line)
            time.sleep(0.1)
    except (BrokenPipeError, ValueError):
        pass


def answer(method: str, params: dict, rid: Any) -> dict | None:
    result: dict | None
    if method == "initialize":
        threading.Thread(target=chatter, daemon=True).start()
        result = initialize(params, "deaf", {"tools": {}, "logging": {}})
    elif method == "tools/list":
        result = {"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]}
    elif method == "ping":
        return None  # never answered
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "ok"}]}
    else:
        result = {}
    out({"jsonrpc": "2.0", "id": rid, "result": result})
    return None


if __name__ == "__main__":
    serve(answer)
