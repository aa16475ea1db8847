"""A raw stdio upstream (handshake era) whose tools answer numbers JSON has no spelling for, each tool a
spelling and a place: ``NaN``, ``Infinity``, ``-Infinity`` and overflowing ``1e999`` / ``-1e400`` (which the
readers take as infinities), in the structured content (deep too), in ``_meta``, in a block's annotations;
``plain`` answers a finite number. Every tool is read-only (the guard lets each call through). Its tool
``progress`` reports progress under the call's token with those spellings, then once with finite numbers
(0.5 of 1), then answers. Its one prompt's messages and its one resource's contents come with ``NaN`` in
their ``_meta``.
"""

from __future__ import annotations

import json
import sys

from tests.gateway.raw_stdio_server import initialize

TEXT = '{"type": "text", "text": "n"}'
RESULTS = {  # the result's JSON text, as the upstream writes it
    "nan_structured": '{"content": [%s], "structuredContent": {"x": NaN}}' % TEXT,
    "inf_meta": '{"content": [%s], "_meta": {"x": Infinity}}' % TEXT,
    "neg_inf_deep": '{"content": [%s], "structuredContent": {"a": [{"b": [1, -Infinity]}]}}' % TEXT,
    "overflow": '{"content": [%s], "structuredContent": {"x": 1e999}}' % TEXT,
    "neg_overflow": '{"content": [%s], "_meta": {"x": [-1e400]}}' % TEXT,
    "annotation": '{"content": [{"type": "text", "text": "n", "annotations": {"priority": NaN}}]}',
    "plain": '{"content": [%s], "structuredContent": {"x": 1.5e300, "y": -0.0}}' % TEXT,
}


PROMPT = '{"messages": [{"role": "user", "content": %s}], "_meta": {"x": NaN}}' % TEXT
RESOURCE = '{"contents": [{"uri": "nf://a", "text": "t"}], "_meta": {"x": [Infinity]}}'
CAPS: dict[str, object] = {"tools": {}, "prompts": {}, "resources": {}}
RAW = {"prompts/get": PROMPT, "resources/read": RESOURCE}
LISTS: dict[str, object] = {"prompts/list": {"prompts": [{"name": "p"}]},
         "resources/list": {"resources": [{"uri": "nf://a", "name": "a"}]},
         "resources/templates/list": {"resourceTemplates": []}}


def out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    tools = [{"name": n, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
             for n in [*RESULTS, "progress"]]
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
            out(json.dumps({"jsonrpc": "2.0", "id": rid, "result": initialize(params, "non-finite", CAPS)}))
            continue
        result = {"tools/list": {"tools": tools}, "ping": {}, **LISTS}.get(method)
        if result is not None:
            out(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))
        elif method in RAW:
            out('{"jsonrpc": "2.0", "id": %s, "result": %s}' % (json.dumps(rid), RAW[method]))
        elif method == "tools/call" and params.get("name") == "progress":
            token = json.dumps((params.get("_meta") or {}).get("progressToken"))
            for progress, total in (("NaN", "1"), ("Infinity", "1"), ("1e999", "1"), ("0.1", "NaN"),
                                    ("0.2", "-Infinity"), ("0.5", "1")):
                out('{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": %s, '
                    '"progress": %s, "total": %s}}' % (token, progress, total))
            out('{"jsonrpc": "2.0", "id": %s, "result": %s}' % (json.dumps(rid), RESULTS["plain"]))
        elif method == "tools/call":
            raw = RESULTS.get(str(params.get("name")), RESULTS["plain"])
            out('{"jsonrpc": "2.0", "id": %s, "result": %s}' % (json.dumps(rid), raw))
        else:
            out(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}))


if __name__ == "__main__":
    main()
