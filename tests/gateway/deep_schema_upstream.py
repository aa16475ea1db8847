"""An upstream (raw JSON-RPC over stdio, handshake era) listing a tool whose input schema nests ``DEPTH``
objects deep, beside a plain tool. python -m tests.gateway.deep_schema_upstream"""

from __future__ import annotations

import os

from tests.gateway.raw_stdio_server import initialize, serve


def deep(depth: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def answer(method: str, params: dict, _rid: object) -> dict | None:
    if method == "initialize":
        return initialize(params, "deep", {"tools": {}})
    if method == "tools/list":
        return {"tools": [{"name": "deep", "description": "d", "inputSchema": deep(int(os.environ["DEPTH"]))},
                          {"name": "ok", "description": "ok", "inputSchema": {"type": "object"},
                           "annotations": {"readOnlyHint": True}}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "hi"}]}
    return {}


if __name__ == "__main__":
    serve(answer)
