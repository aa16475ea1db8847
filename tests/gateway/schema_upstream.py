"""An upstream whose tool schemas are hostile (raw JSON-RPC over stdio, handshake era): a ``$ref`` to the
URL in ``REF_URL`` and to the file ``file://$REF_FILE#/s``, a backtracking ``pattern`` (alone, and as
``patternProperties`` beside ``additionalProperties`` or ``unevaluatedProperties``), a look-around pattern,
``uniqueItems``, a schema fanning out through local references. Every call answers with the arguments it
received, so a test sees what reached the upstream.

python -m tests.gateway.schema_upstream
"""

from __future__ import annotations

import json
import os

from tests.gateway.raw_stdio_server import initialize, serve

URL = os.environ.get("REF_URL", "http://127.0.0.1:9/")
FILE = f"file://{os.environ.get('REF_FILE', '/x')}#/s"
SCHEMAS = {
    "url_ref": {"type": "object", "properties": {"q": {"$ref": URL}}},
    "file_ref": {"type": "object", "properties": {"q": {"$ref": FILE}}},
    "search": {"type": "object", "properties": {"q": {"type": "string", "pattern": "^([a-z ]+)+$"}}},
    "lookaround": {"type": "object", "properties": {"q": {"type": "string", "pattern": "^(?=a)a+$"}}},
    "keyed": {"type": "object", "patternProperties": {"^([a-z]+)+$": {"type": "integer"}}},
    # the same pattern, read again by the keywords that find which properties are "additional" or unevaluated
    "closed": {"type": "object", "patternProperties": {"^([a-z]+)+$": {}}, "additionalProperties": False},
    "unevaluated": {"type": "object", "patternProperties": {"^([a-z]+)+$": {}},
                    "unevaluatedProperties": False},
    "distinct": {"type": "object", "properties": {"items": {"type": "array", "uniqueItems": True}}},
    # local references only, but each level applies the next one twice: 2^40 subschemas for one value
    "fanout": {"type": "object", "properties": {"q": {"$ref": "#/$defs/l0"}},
               "$defs": {**{f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}, {"$ref": f"#/$defs/l{i + 1}"}]}
                            for i in range(40)}, "l40": {"type": "integer"}}},
}


def answer(method: str, params: dict, _rid: object) -> dict:
    if method == "initialize":
        return initialize(params, "schemas", {"tools": {}})
    if method == "tools/list":
        return {"tools": [{"name": n, "inputSchema": s, "annotations": {"readOnlyHint": True}}
                          for n, s in SCHEMAS.items()]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": json.dumps(params.get("arguments"))}], "isError": False}
    return {}


if __name__ == "__main__":
    serve(answer)
