"""An upstream (raw JSON-RPC over stdio, handshake era) listing tools whose input schemas are cheap to send
and costly to check each call: ``pick`` takes one of ``WIDE`` allowed values (``enum``, 1,000,000 by
default, about 7 MB of listing, within its bound), ``same`` one value equal to a ``const`` list of
``WIDE // 100`` numbers, ``sets`` an array of any of ``WIDE // 100`` allowed lists, ``broad`` ``WIDE // 50``
properties (each a subschema the metaschema check walks); ``few`` is a plain enum and const. Every call is
answered "ran". python -m tests.gateway.wide_value_upstream
"""

from __future__ import annotations

import os

from tests.gateway.raw_stdio_server import initialize, serve

WIDE = int(os.environ.get("WIDE", "1000000"))
RO = {"readOnlyHint": True}


def tools() -> list[dict]:
    row = list(range(100))
    return [
        {"name": "pick", "inputSchema": {"type": "object", "properties": {"x": {"enum": list(range(WIDE))}}},
         "annotations": RO},
        {"name": "same", "inputSchema": {"type": "object", "properties": {
            "x": {"const": list(range(WIDE // 100))}}},
         "annotations": RO},
        {"name": "sets", "inputSchema": {"type": "object", "properties": {
            "x": {"type": "array", "items": {"enum": [row[:-1] + [i] for i in range(WIDE // 100)]}}}},
         "annotations": RO},
        {"name": "broad", "inputSchema": {"type": "object", "properties": {
            f"p{i}": {"type": "integer"} for i in range(WIDE // 50)}}, "annotations": RO},
        {"name": "few", "inputSchema": {"type": "object", "properties": {
            "x": {"enum": ["a", "b", {"c": [1]}]}, "y": {"const": ["kept", 1]}}}, "annotations": RO},
    ]


def answer(method: str, params: dict, _rid: object) -> dict | None:
    if method == "initialize":
        return initialize(params, "wide", {"tools": {}})
    if method == "tools/list":
        return {"tools": tools()}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "ran"}]}
    return {}


if __name__ == "__main__":
    serve(answer)
