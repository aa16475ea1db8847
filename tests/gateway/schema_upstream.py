"""An upstream whose tool schemas are hostile (raw JSON-RPC over stdio, handshake era): a ``$ref`` to the
URL in ``REF_URL`` and to the file ``file://$REF_FILE#/s``, a backtracking ``pattern``, a look-around
pattern, ``uniqueItems``. Every call answers with the arguments it received, so a test sees what reached
the upstream.

python -m tests.gateway.schema_upstream
"""

from __future__ import annotations

import json
import os
import sys

URL = os.environ.get("REF_URL", "http://127.0.0.1:9/")
FILE = f"file://{os.environ.get('REF_FILE', '/x')}#/s"
SCHEMAS = {
    "url_ref": {"type": "object", "properties": {"q": {"$ref": URL}}},
    "file_ref": {"type": "object", "properties": {"q": {"$ref": FILE}}},
    "search": {"type": "object", "properties": {"q": {"type": "string", "pattern": "^([a-z ]+)+$"}}},
    "lookaround": {"type": "object", "properties": {"q": {"type": "string", "pattern": "^(?=a)a+$"}}},
    "keyed": {"type": "object", "patternProperties": {"^([a-z]+)+$": {"type": "integer"}}},
    "distinct": {"type": "object", "properties": {"items": {"type": "array", "uniqueItems": True}}},
}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    tools = [{"name": n, "inputSchema": s, "annotations": {"readOnlyHint": True}} for n, s in SCHEMAS.items()]
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if rid is None:
            continue
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-11-25"),
                      "capabilities": {"tools": {}}, "serverInfo": {"name": "schemas", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            text = json.dumps(params.get("arguments"))
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            result = {}
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
