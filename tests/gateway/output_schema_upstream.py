"""A raw stdio upstream whose tools declare an ``outputSchema`` and answer with structured content that does
not fit it (a wrong type, none at all, a string its backtracking pattern takes exponential time to refuse),
or whose schema a checker must not follow (a reference to a URL); ``fine`` fits, ``failed`` is an error
result (which no schema binds), ``free`` declares no schema.

python output_schema_upstream.py
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tests.gateway.raw_stdio_server import initialize, serve  # noqa: E402

NUMBER = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
BACKTRACKING = {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}}
TOOLS: dict[str, tuple[dict | None, object, bool]] = {  # name -> (outputSchema, structuredContent, isError)
    "fine": (NUMBER, {"n": 1}, False),
    "failed": (NUMBER, None, True),
    "free": (None, {"anything": ["goes"]}, False),
    "wrong_type": (NUMBER, {"n": "one"}, False),
    "missing": (NUMBER, None, False),
    "not_an_object": (NUMBER, [1, 2], False),
    "backtracking": (BACKTRACKING, {"s": "a" * 40 + "!"}, False),
    "remote_ref": ({"type": "object", "properties": {"s": {"$ref": "http://127.0.0.1:9/s.json"}}}, {"s": 1},
                   False),
}


def answer(method: str, params: dict, rid: object) -> dict | None:
    if method == "initialize":
        return initialize(params, "schemas", {"tools": {}})
    if method == "tools/list":
        return {"tools": [
            {"name": name, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True},
             **({"outputSchema": schema} if schema is not None else {})}
            for name, (schema, _, _) in TOOLS.items()
        ]}
    if method == "tools/call":
        _, structured, failed = TOOLS[params["name"]]
        result: dict = {"content": [{"type": "text", "text": params["name"]}], "isError": failed}
        if structured is not None:
            result["structuredContent"] = structured
        return result
    return {}


if __name__ == "__main__":
    serve(answer)
