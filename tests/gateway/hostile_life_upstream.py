"""A raw stdio upstream (handshake era) hostile at the transport, by ``MODE``:

- ``silent``: never answers anything (initialize included);
- ``other_id``: answers initialize under another id;
- ``close_stdout``: serves until its tool ``go`` is called, then closes its stdout and keeps running;
- ``fork_keep``: starts a child that keeps its stdout open (in its own session when ``--escape``, out of
  the upstream's process group) and dies when its tool ``go`` is called;
- ``flood``: serves, and after answering ``go`` sends ``FLOOD`` notifications unasked, as fast as it can
  (list changes, log lines, resource updates, progress for no call), each ``tools/list`` it is asked noted
  in ``PIDS.lists``.

Every process it starts writes its pid to the file ``PIDS`` (one a line), so a test can see that none is left.

python hostile_life_upstream.py MODE PIDS [--escape]
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
from raw_stdio_server import initialize, send, serve  # noqa: E402

MODE, PIDS = sys.argv[1], sys.argv[2]
ESCAPE = "--escape" in sys.argv[3:]
FLOOD = 10_000
TOOL = {"name": "go", "description": "Ends the upstream's wire, as its mode says.",
        "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}


def note_pid() -> None:
    with open(PIDS, "a") as f:
        f.write(f"{os.getpid()}\n")


def answer(method: str, params: dict, rid: Any) -> dict | None:
    if MODE == "silent":
        return None
    if method == "initialize":
        if MODE == "other_id":
            send({"jsonrpc": "2.0", "id": f"not-{rid}", "result": initialize(params, "hostile", {})})
            return None
        return initialize(params, "hostile", {"tools": {}})
    if method == "tools/list":
        with open(PIDS + ".lists", "a") as f:
            f.write("list\n")
        return {"tools": [TOOL]}
    if method == "ping":
        return {}
    if method == "tools/call":
        if MODE == "close_stdout":
            sys.stdout.flush()
            os.close(1)
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - what it writes goes nowhere now
            while True:  # keeps running, reading nothing more
                time.sleep(1)
        if MODE == "flood":
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "flooding"}]}})
            kinds = [("notifications/tools/list_changed", None),
                     ("notifications/message", {"level": "info", "data": "x" * 100}),
                     ("notifications/resources/updated", {"uri": "file:///nobody/subscribed"}),
                     ("notifications/progress", {"progressToken": 987654, "progress": 1})]
            lines = []
            for i in range(FLOOD):
                method_, params_ = kinds[i % len(kinds)]
                lines.append(json.dumps({"jsonrpc": "2.0", "method": method_,
                                         **({"params": params_} if params_ else {})}))
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            return None
        os._exit(3)  # fork_keep: dies, its child still holding the pipe
    return None


note_pid()
if MODE == "fork_keep" and os.fork() == 0:
    if ESCAPE:
        os.setsid()
    note_pid()
    while True:  # holds stdin, stdout and stderr open
        time.sleep(1)
serve(answer)
