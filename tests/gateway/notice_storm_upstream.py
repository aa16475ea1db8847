"""A raw stdio upstream (handshake era) that, once its tool ``storm`` is called, writes notifications as fast
as its pipe takes them until it is stopped: progress under the token of the call that has just ended (and
under tokens no call ever had), log lines, updates of a resource nobody subscribed to (each some ``PAD``
characters long), and (with ``CHANGES=1``) tools/list_changed, or (with ``GARBAGE=1``) lines that are no
JSON-RPC message and answers to ids never asked; its answers meanwhile are written between the
storm's notices (with ``--deaf``, a ping is never answered while it storms). ``calm`` stops the storm. How
many it wrote is put in the file ``COUNT`` when it stops.
Tools ``ping``, ``storm`` and ``calm`` are read-only.
python -m tests.gateway.notice_storm_upstream
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading

from tests.gateway.raw_stdio_server import initialize

CAPS = {"tools": {"listChanged": True}, "logging": {}, "resources": {"subscribe": True}}
TOOLS = [{"name": n, "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
         for n in ("ping", "storm", "calm")]
PAD = "x" * int(os.environ.get("PAD", "200"))  # of a notice: fewer of them fill the pipe
_write = threading.Lock()
_calm = threading.Event()
_answers: queue.SimpleQueue[str] = queue.SimpleQueue()  # written by the storm first, between its notices
_storming = threading.Event()


def out(message: dict) -> None:
    line = json.dumps(message) + "\n"
    with _write:
        if _storming.is_set():  # the storm's writer takes turns with the answers (a lock is not fair)
            _answers.put(line)
            return
        sys.stdout.write(line)
        sys.stdout.flush()


def storm(token: object) -> None:
    kinds = [
        {"method": "notifications/progress",
         "params": {"progressToken": token, "progress": 1, "message": PAD}},
        {"method": "notifications/progress", "params": {"progressToken": 987654321, "progress": 1}},
        {"method": "notifications/message", "params": {"level": "error", "data": PAD}},
        {"method": "notifications/resources/updated", "params": {"uri": "storm://nobody/" + PAD}},
    ]
    if os.environ.get("CHANGES") == "1":
        kinds.append({"method": "notifications/tools/list_changed"})
    lines = [json.dumps({"jsonrpc": "2.0", **k}) + "\n" for k in kinds]
    if os.environ.get("GARBAGE") == "1":  # lines that are no message, and answers to ids never asked
        lines = ["not JSON " + PAD + "\n", '{"jsonrpc": "2.0", "method": 5}\n'] + [
            json.dumps({"jsonrpc": "2.0", "id": i, "result": {"pad": PAD}}) + "\n"
            for i in (987654321, (1 << 40) + 123, "nobody's")]  # the second: the lean calls' range
    sent = 0
    _storming.set()
    try:
        while not _calm.is_set():
            while not _answers.empty():
                sys.stdout.write(_answers.get())
            for line in lines:
                sys.stdout.write(line)
            sys.stdout.flush()
            sent += len(lines)
        with _write:
            _storming.clear()
            while not _answers.empty():
                sys.stdout.write(_answers.get())
            sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        pass
    with open(os.environ["COUNT"], "w") as f:
        f.write(str(sent))


def main() -> None:
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
            result: dict = initialize(params, "storm", CAPS)
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method in ("resources/list", "resources/templates/list"):
            result = {"resources": [], "resourceTemplates": []}
        elif method == "ping" and "--deaf" in sys.argv and _storming.is_set():
            continue  # storming, it never answers the health check
        elif method in ("ping", "logging/setLevel"):
            result = {}
        elif method == "tools/call":
            name = params.get("name")
            result = {"content": [{"type": "text", "text": f"{name} done"}]}
            if name == "calm":
                _calm.set()
            out({"jsonrpc": "2.0", "id": rid, "result": result})
            if name == "storm":
                token = (params.get("_meta") or {}).get("progressToken", 1)
                threading.Thread(target=storm, args=(token,), daemon=True).start()
            continue
        else:
            out({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
            continue
        out({"jsonrpc": "2.0", "id": rid, "result": result})


if __name__ == "__main__":
    main()
