"""A raw stdio upstream (handshake era) whose tool schemas hold numbers JSON has no spelling for, a tool a
spelling and a place (``SCHEMAS``: ``NaN`` as a default, ``1e999`` as a bound, ``Infinity`` deep in an
output schema, ...), beside plain tools ``ok``, ``sicken`` and ``heal``. ``TOOLS`` (comma-separated names of
``SCHEMAS``) says which of them it lists first; ``sicken`` lists them all from then on, ``heal`` none, each
announcing the change (tools/list_changed). Each tool is read-only and answers one text block.
``TABLE=surrogates`` takes the tools of ``SURROGATES`` (a lone surrogate in a text) instead.
python -m tests.gateway.non_finite_schema_upstream
"""

from __future__ import annotations

import json
import os
import sys

from tests.gateway.raw_stdio_server import initialize

SCHEMAS = {  # a tool's schemas' JSON text, as the upstream writes it
    "nan_default": '"inputSchema": {"type": "object", "properties": {"n": {"type": "number", '
                   '"default": NaN}}}',
    "overflow_bound": '"inputSchema": {"type": "object", "properties": {"n": {"type": "number", '
                      '"maximum": 1e999}}}',
    "neg_inf_bound": '"inputSchema": {"type": "object", "properties": {"n": {"type": "number", '
                     '"minimum": -Infinity}}}',
    "nan_enum": '"inputSchema": {"type": "object", "properties": {"n": {"enum": [1, NaN]}}}',
    "inf_output": '"inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "properties": '
                  '{"a": {"type": "array", "items": {"type": "number", "exclusiveMaximum": Infinity}}}}',
    "nan_meta": '"inputSchema": {"type": "object"}, "_meta": {"x": NaN}',
}
# texts holding a lone surrogate, escaped as JSON allows (``\ud800``): no UTF-8 spelling exists for them
SURROGATES = {
    "in_description": '"description": "fine \\ud800 text", "inputSchema": {"type": "object"}',
    "in_title": '"title": "\\udfff", "inputSchema": {"type": "object"}',
    "in_property_name": '"inputSchema": {"type": "object", "properties": {"a\\ud83d": {"type": "string"}}}',
    "in_enum": '"inputSchema": {"type": "object", "properties": {"a": {"enum": ["x", "\\udc00y"]}}}',
    "in_meta": '"inputSchema": {"type": "object"}, "_meta": {"k": ["\\ud800\\ud800"]}',
    "in_annotation": '"inputSchema": {"type": "object"}, "annotations": {"title": "t\\udbff"}',
    "in_output": '"inputSchema": {"type": "object"}, "outputSchema": {"type": "object", '
                 '"description": "\\ude00"}',
}
OK = '"inputSchema": {"type": "object", "properties": {"n": {"type": "number", "maximum": 1.5e300}}}'


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def tool(name: str, schemas: str) -> str:
    return '{"name": "%s", %s, "annotations": {"readOnlyHint": true}}' % (name, schemas)


def listing(hostile: list[str], table: dict[str, str]) -> str:
    plain = [tool(n, OK) for n in ("ok", "sicken", "heal")]
    return '{"tools": [%s]}' % ", ".join([*(tool(n, table[n]) for n in hostile), *plain])


def main() -> None:
    table = SURROGATES if os.environ.get("TABLE") == "surrogates" else SCHEMAS
    hostile = [n for n in os.environ.get("TOOLS", "").split(",") if n]
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        rid, method = msg.get("id"), msg.get("method")
        if rid is None or method is None:
            continue
        params = msg.get("params") or {}
        if method == "initialize":
            result = json.dumps(initialize(params, "nf-schema", {"tools": {"listChanged": True}}))
        elif method == "tools/list":
            result = listing(hostile, table)
        elif method == "tools/call":
            if params.get("name") in ("sicken", "heal"):
                hostile = list(table) if params.get("name") == "sicken" else []
                out('{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}')
            result = '{"content": [{"type": "text", "text": "called %s"}]}' % str(params.get("name"))[:40]
        elif method == "ping":
            result = "{}"
        else:
            out(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}))
            continue
        out('{"jsonrpc": "2.0", "id": %s, "result": %s}' % (json.dumps(rid), result))


if __name__ == "__main__":
    main()
