"""How many turns of the event loop one sequential call costs the gateway, and what each turn ran (issue 21).

Every callback the loop runs (a task's step, a wake-up, a transport's read, a thread's hand-over) is a pass
through ``_run_once`` and often a ``select`` system call; the count per call shows where a call yields to the
loop without needing to (an uncontended anyio lock's checkpoint, a task made for work that never waits). The
gateway runs under this file (``--serve``): asyncio's pure-Python task (so a step names its coroutine and
where it was waiting) and a counter around ``Handle._run``; a raw client calls the test toolbox's no-op N
times over stdio (either era) and the counts are divided by the calls made (the warm-up included).

Usage: python benchmarks/harness/loop_turns.py [--calls 500] [--era modern|legacy]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLBOX = ROOT / "tests" / "gateway" / "toolbox_server.py"
MODERN = "2026-07-28"
WARM = 50


def serve(out: str, argv: list[str]) -> None:
    """The gateway with its loop's callbacks counted; the counts go to ``out`` on SIGUSR1 and at exit."""
    import asyncio.events
    import asyncio.tasks
    import atexit
    import runpy

    asyncio.tasks.Task = asyncio.Task = asyncio.tasks._PyTask  # type: ignore[misc]
    counts: collections.Counter[str] = collections.Counter()
    run = asyncio.events.Handle._run

    def waiting_at(coro: object) -> str | None:
        where = None
        while coro is not None:
            frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
            if frame is not None:
                where = f"{frame.f_code.co_qualname}:{frame.f_lineno}"
            coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
        return where

    def counted(handle: asyncio.events.Handle) -> None:
        cb = handle._callback
        task = getattr(cb, "__self__", None)
        if isinstance(task, asyncio.tasks._PyTask):
            coro = task.get_coro()
            counts[f"{cb.__name__.strip('_')} {getattr(coro, '__qualname__', '?')} @ {waiting_at(coro)}"] += 1
        else:
            counts[getattr(cb, "__qualname__", type(cb).__name__)] += 1
        run(handle)

    asyncio.events.Handle._run = counted  # type: ignore[method-assign]

    def dump(*_: object) -> None:
        Path(out).write_text(json.dumps(counts))

    atexit.register(dump)
    signal.signal(signal.SIGUSR1, dump)
    sys.argv = ["sentinel_mcp", *argv]
    runpy.run_module("sentinel_mcp", run_name="__main__")


def measure(calls: int, era: str, script: str = __file__) -> tuple[dict[str, int], int]:
    """``script --serve OUT ARGV...`` serves the gateway, counting; its counts after ``calls`` calls."""
    data = Path(tempfile.mkdtemp(prefix="loop-turns-"))
    cfg = data / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [str(TOOLBOX)]}},
                               "sentinel": {"data_dir": str(data / "state"), "builtins": []}}))
    out = data / "turns.json"
    proc = subprocess.Popen(
        [sys.executable, script, "--serve", str(out), "-c", str(cfg), "serve"], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)})
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def answer(mid: int) -> dict:
        while True:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise SystemExit("the gateway ended")
            message = json.loads(line)
            if message.get("id") == mid:
                return message

    meta = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "loop-turns", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    params: dict = {} if era == "legacy" else {"_meta": meta}
    if era == "legacy":
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "loop-turns", "version": "1"}}})
        answer(0)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})
    name = next(t["name"] for t in answer(1)["result"]["tools"] if t["name"].endswith("noop"))
    for i in range(WARM + calls):
        send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
              "params": {"name": name, "arguments": {}, **params}})
        assert "result" in answer(100 + i)
    proc.send_signal(signal.SIGUSR1)
    for _ in range(100):
        if out.exists():
            break
        time.sleep(0.05)
    proc.stdin.close()
    proc.wait(30)
    return json.loads(out.read_text()), WARM + calls


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        return serve(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--era", choices=("modern", "legacy"), default="modern")
    args = ap.parse_args()
    counts, made = measure(args.calls, args.era)
    per_call = {k: v / made for k, v in counts.items() if v / made >= 0.5}
    total = sum(per_call.values())
    print(f"loop callbacks per sequential stdio call ({args.era}, {made} calls): {total:.1f}")
    for kind, n in sorted(per_call.items(), key=lambda kv: -kv[1]):
        print(f"  {n:4.1f}  {kind}")


if __name__ == "__main__":
    main()
