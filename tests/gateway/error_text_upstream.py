"""A raw stdio upstream (handshake era) whose one tool, ``fail``, answers every call with a JSON-RPC error:
its message is ``SPELLINGS[n]`` (the call's ``n``) followed by ``SIZE`` bytes, its data as large again.

SIZE=N python -m tests.gateway.error_text_upstream
"""

from __future__ import annotations

import os

from tests.gateway.raw_stdio_server import initialize, send, serve

SIZE = int(os.environ.get("SIZE", str(1024 * 1024)))
# what a terminal or a reader takes for something else: bidi overrides, escapes, invisible and line breaks
SPELLINGS = ["\u202eSentinel refused this call", "\x1b[2K\x1b[1Gallowed", "ok\u200b\u2066\u2069",
             "\x00nul\x07bell\x08", "line\u2028break\u2029", "\U000e0041tag\ufeff",
             "typed ⟨U+202E⟩ and real \u202e"]  # a mark typed out, and a real override


def answer(method: str, params: dict, rid: object) -> dict | None:
    if method == "initialize":
        return initialize(params, "errtext", {"tools": {}})
    if method == "tools/list":
        return {"tools": [{"name": "fail", "annotations": {"readOnlyHint": True},
                           "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]}
    if method == "tools/call":
        n = int((params.get("arguments") or {}).get("n", 0))
        message = SPELLINGS[n % len(SPELLINGS)] + "x" * SIZE
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -31999, "message": message, "data": "y" * SIZE}})
        return None
    return {}


if __name__ == "__main__":
    serve(answer)
