"""A stdio upstream, written without the SDK, that asks its client things DURING the handshake: on
``initialize`` it sends, before its answer, a request of each method below and waits for each answer. Its one
tool, ``heard``, returns what its client answered each (by method), so a test sees what the upstream heard.
"""

from __future__ import annotations

import json
import sys

VERSION = "2025-11-25"
ASKED = ["roots/list", "sampling/createMessage", "elicitation/create", "acme/whoami\u202e", "ping"]
PARAMS = {
    "sampling/createMessage": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                               "maxTokens": 5},
    "elicitation/create": {"mode": "form", "message": "your password?",
                           "requestedSchema": {"type": "object", "properties": {"p": {"type": "string"}}}},
}
TOOL = {"name": "heard", "description": "What the client answered during the handshake.",
        "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}}


def send(msg: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main() -> None:
    heard: dict[str, object] = {}
    asked: dict[int, str] = {}
    waiting_init: object = None
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method, rid = msg.get("method"), msg.get("id")
        if method is None and rid in asked:  # an answer to one of ours
            heard[asked.pop(rid)] = msg.get("error") or msg.get("result")
            if not asked and waiting_init is not None:
                send({"jsonrpc": "2.0", "id": waiting_init, "result": {
                    "protocolVersion": VERSION, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "handshake-asker", "version": "1"}}})
                waiting_init = None
            continue
        if rid is None:
            continue
        if method == "initialize":
            waiting_init = rid
            for i, m in enumerate(ASKED):
                asked[900 + i] = m
                send({"jsonrpc": "2.0", "id": 900 + i, "method": m, "params": PARAMS.get(m, {})})
            continue
        if method == "ping":
            result: object = {}
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": json.dumps(heard)}], "isError": False}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
