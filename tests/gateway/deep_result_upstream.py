"""A raw stdio upstream whose read answers JSON nested as deep as asked, written as text (no encoder's depth
limit on this side): ``deep_structured(depth)`` as its structured content (and that text as its text),
``deep_text(depth)`` as a text content only, ``shallow(id)`` a plain answer (the gateway still answers),
``twice(id)`` a text content whose JSON gives ``owner`` twice (u1, then u2).

python deep_result_upstream.py
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

from tests.gateway.raw_stdio_server import initialize, serve  # noqa: E402

RO = {"readOnlyHint": True, "destructiveHint": False}
DEPTH = {"type": "object", "properties": {"depth": {"type": "integer", "minimum": 0, "maximum": 1_000_000}},
         "required": ["depth"]}
TOOLS = [
    {"name": "deep_structured", "inputSchema": DEPTH, "annotations": RO},
    {"name": "deep_text", "inputSchema": DEPTH, "annotations": RO},
    {"name": "shallow", "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}},
                                        "required": ["id"]}, "annotations": RO},
    {"name": "twice", "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}},
                                      "required": ["id"]}, "annotations": RO},
]


def nested(depth: int) -> str:
    """{"owner": "u1", "v": [{"m": [... "x" ...]}]}: ``depth`` levels under "v" (arrays and objects)."""
    opening = "".join('[' if i % 2 else '{"m":' for i in range(depth))
    closing = "".join(']' if i % 2 else '}' for i in reversed(range(depth)))
    return '{"owner":"u1","v":' + opening + '"x"' + closing + "}"


def write(rid: object, result_text: str) -> None:
    sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":' + result_text + "}\n")
    sys.stdout.flush()


def answer(method: str, params: dict, rid: object) -> dict | None:
    if method == "initialize":
        return initialize(params, "deep", {"tools": {}})
    if method == "tools/list":
        return {"tools": TOOLS}
    if method != "tools/call":
        return {} if method == "ping" else None
    name, args = params.get("name"), params.get("arguments") or {}
    if name == "shallow":
        text = json.dumps({"owner": "u1", "id": args.get("id")})
        return {"content": [{"type": "text", "text": text}], "structuredContent": json.loads(text)}
    if name == "twice":
        text = '{"owner":"u1","id":' + json.dumps(args.get("id")) + ',"owner":"u2"}'
        return {"content": [{"type": "text", "text": text}]}
    doc = nested(int(args["depth"]))
    content = '{"content":[{"type":"text","text":' + json.dumps(doc) + "}]"
    write(rid, content + (',"structuredContent":' + doc if name == "deep_structured" else "") + "}")
    return None


if __name__ == "__main__":
    serve(answer)
