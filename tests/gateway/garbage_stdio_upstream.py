"""A raw stdio upstream (handshake era) that, once listed, writes ``N`` lines that are not JSON-RPC messages
(``KIND``: ``json``, a JSON object of no message's shape; ``text``, not JSON at all; ``mixed``, both and a
valid notification of an unknown method); its one tool, ``ok``, says whether the flood is over.

KIND=json N=20000 python -m tests.gateway.garbage_stdio_upstream
"""

from __future__ import annotations

import os
import sys
import threading
import time

from tests.gateway.raw_stdio_server import initialize, serve

N = int(os.environ.get("N", "20000"))
KIND = os.environ.get("KIND", "json")
LINES = {"json": ['{"jsonrpc": "2.0", "method": 5}'], "text": ["garbage line {i}"],
         "mixed": ['{"jsonrpc": "2.0", "id": {i}, "result": 7, "error": 1}', "\x1b[2Kgarbage {i}",
                   '{"jsonrpc": "2.0", "method": "hostile/unknown_{i}"}']}
DONE = threading.Event()
WRITE = threading.Lock()


def flood() -> None:
    time.sleep(0.5)
    kinds = LINES[KIND]
    with WRITE:
        for i in range(N):
            sys.stdout.write(kinds[i % len(kinds)].replace("{i}", str(i)) + "\n")
        sys.stdout.flush()
    DONE.set()


def answer(method: str, params: dict, rid: object) -> dict | None:
    if method == "initialize":
        return initialize(params, "garbage", {"tools": {}})
    if method == "tools/list":
        threading.Thread(target=flood, daemon=True).start()
        return {"tools": [{"name": "ok", "inputSchema": {"type": "object"},
                           "annotations": {"readOnlyHint": True}}]}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "flood over" if DONE.is_set() else "flooding"}]}
    return {}


if __name__ == "__main__":
    serve(answer)
