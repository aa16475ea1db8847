"""The JSON-RPC line loop of the test's raw stdio upstreams (handshake era): each request with an id goes to
``answer(method, params)``; its dict is the result, None sends nothing (a request the server ignores)."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def initialize(params: dict, name: str, capabilities: dict) -> dict:
    return {"protocolVersion": params.get("protocolVersion", "2025-11-25"), "capabilities": capabilities,
            "serverInfo": {"name": name, "version": "1"}}


def serve(answer: Callable[[str, dict, Any], dict | None]) -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        rid = msg.get("id")
        if rid is None or "method" not in msg:
            continue
        result = answer(msg["method"], msg.get("params") or {}, rid)
        if result is not None:
            send({"jsonrpc": "2.0", "id": rid, "result": result})
