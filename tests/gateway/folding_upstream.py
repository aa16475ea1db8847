"""An upstream that reads its tool arguments as Go's ``encoding/json`` reads them into a struct (raw JSON-RPC
over stdio, handshake era): a key matches a field case-insensitively, with Unicode's simple folds (``ſ`` is
``s``, the Kelvin sign ``K`` is ``k``), and of several matching keys the last one wins. Many Go MCP servers
decode so (the Go SDK's own GHSA-wvj2-96wp-fq3f). Each call is appended to ``$BANK_LOG`` as
``bank_upstream`` does: the tool and the arguments its code got.

python tests/gateway/folding_upstream.py
"""

from __future__ import annotations

import json
import os

from tests.gateway.raw_stdio_server import initialize, serve

FIELDS = {"transfer": ("account", "amount"), "close_account": ("account", "force")}
SCHEMAS = {
    "transfer": {
        "type": "object",
        "properties": {"account": {"type": "integer"}, "amount": {"type": "integer"}},
        "required": ["account", "amount"],
    },
    "close_account": {
        "type": "object",
        "properties": {"account": {"type": "integer"}, "force": {"type": "boolean"}},
        "required": ["account"],
    },
}


def _fold(key: str) -> str:
    return key.replace("\u017f", "s").replace("\u212a", "k").lower()


def decoded(tool: str, arguments: dict) -> dict:
    out: dict = {}
    for key, value in arguments.items():  # in the message's order: a later match overwrites
        for field in FIELDS[tool]:
            if _fold(key) == field:
                out[field] = value
    return out


def answer(method: str, params: dict, _rid: object) -> dict:
    if method == "initialize":
        return initialize(params, "folding-bank", {"tools": {}})
    if method == "tools/list":
        return {
            "tools": [
                {"name": n, "inputSchema": s, "annotations": {"destructiveHint": True, "readOnlyHint": False}}
                for n, s in SCHEMAS.items()
            ]
        }
    if method == "tools/call":
        tool = params["name"]
        row = {"tool": tool, "arguments": decoded(tool, params.get("arguments") or {})}
        with open(os.environ["BANK_LOG"], "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        return {"content": [{"type": "text", "text": json.dumps(row)}], "isError": False}
    return {}


if __name__ == "__main__":
    serve(answer)
