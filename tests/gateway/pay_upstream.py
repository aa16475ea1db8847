"""A raw stdio upstream (handshake era) whose tool schemas declare defaults, nested models, arrays of models
and open or closed objects, for the tests of what a guard reads against what the upstream acts on
(``gateway/argument_shape.py``). Every ``tools/call`` line is appended as received to ``$PAY_LOG`` (the exact
text Sentinel sent), so a test reads the bytes the upstream got.

python tests/gateway/pay_upstream.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2]))
from tests.gateway.raw_stdio_server import initialize, send  # noqa: E402

OPTIONS = {"type": "object", "properties": {"express": {"type": "boolean", "default": True},
                                            "note": {"type": "string"}}}
ITEM = {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "default": 10},
                                         "gift": {"$ref": "#/$defs/Options"}},
        "required": ["sku"]}
SCHEMAS = {
    # the upstream transfers in BTC unless told otherwise
    "transfer": {"type": "object", "properties": {"amount": {"type": "integer"},
                                                  "currency": {"type": "string", "default": "BTC"},
                                                  "memo": {"type": "string"},
                                                  # pydantic's ``memo2: str = None``: a default
                                                  # its type refuses
                                                  "memo2": {"type": "string", "default": None}},
                 "required": ["amount"]},
    "ship": {"type": "object", "properties": {"order": {"type": "string"},
                                              "options": {"$ref": "#/$defs/Options"},
                                              "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                                              "later": {"anyOf": [{"$ref": "#/$defs/Options"},
                                                                  {"type": "null"}], "default": None}},
             "required": ["order"], "$defs": {"Options": OPTIONS, "Item": ITEM}},
    "tag": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": True},
    "label": {"type": "object", "properties": {"name": {"type": "string"}},
              "additionalProperties": {"type": "string"}},
    "pattern": {"type": "object", "properties": {"name": {"type": "string"}},
                "patternProperties": {"^x-": {"type": "string"}}},
    # a card or a bank account, as pydantic writes ``method: Card | Bank`` (its models ignore other keys)
    "settle": {"type": "object", "properties": {
        "amount": {"type": "integer"},
        "method": {"anyOf": [{"$ref": "#/$defs/Card"}, {"$ref": "#/$defs/Bank"}]}},
        "required": ["amount", "method"],
        "$defs": {"Card": {"type": "object", "required": ["kind"], "properties": {
                      "kind": {"const": "card"}, "number": {"type": "string"},
                      "save": {"type": "boolean", "default": False}}},
                  "Bank": {"type": "object", "required": ["kind"], "properties": {
                      "kind": {"const": "bank"}, "iban": {"type": "string"},
                      "instant": {"type": "boolean", "default": True}}}}},
    "free": {"type": "object"},
    "none": {"type": "object", "properties": {}},
}


def answer(method: str, params: dict) -> dict:
    if method == "initialize":
        return initialize(params, "pay", {"tools": {}})
    if method == "tools/list":
        return {"tools": [{"name": n, "inputSchema": s,
                           "annotations": {"readOnlyHint": False, "destructiveHint": True}}
                          for n, s in SCHEMAS.items()]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "done"}], "isError": False}
    return {}


def main() -> None:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("method") == "tools/call":
            with open(os.environ["PAY_LOG"], "a", encoding="utf-8") as f:
                f.write(line.rstrip("\n") + "\n")
        if msg.get("id") is not None and "method" in msg:
            result = answer(msg["method"], msg.get("params") or {})
            send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


if __name__ == "__main__":
    main()
