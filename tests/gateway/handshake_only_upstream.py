"""A stdio upstream of the handshake era only, written without the SDK: it answers ``initialize`` (2025-11-25)
and its few methods, and, like some older servers, never answers a method it does not know (so a
``server/discover`` probe would wait out the client's probe timeout). Its one tool, ``seen``, returns the
protocol version it agreed and every method it was sent, in order: what the upstream saw, not what the
client believes.
"""

from __future__ import annotations

import json
import sys

VERSION = "2025-11-25"
TOOL = {"name": "seen", "description": "The era agreed and the methods received.",
        "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": True}}


def main() -> None:
    agreed: str | None = None
    methods: list[str] = []
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if not isinstance(msg, dict):
            continue
        method, rid = msg.get("method"), msg.get("id")
        if isinstance(method, str):
            methods.append(method)
        if rid is None:
            continue  # a notification (initialized, cancelled...) or an answer
        if method == "initialize":
            agreed = VERSION
            result: object = {"protocolVersion": VERSION, "capabilities": {"tools": {}},
                              "serverInfo": {"name": "handshake-only", "version": "1"}}
        elif agreed is None:
            continue  # anything before the handshake, server/discover included: no answer at all
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            text = json.dumps({"era": agreed, "methods": methods})
            result = {"content": [{"type": "text", "text": text}], "isError": False}
        else:
            continue
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
