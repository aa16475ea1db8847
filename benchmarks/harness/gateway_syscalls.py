"""System calls of the gateway per sequential HTTP 2026-07-28 call (issue 21), by kind, with the idle
gateway's own rate taken away: ``strace -c -f`` attached to the gateway for ``--calls`` calls of the test
toolbox's no-op (the toolbox over streamable HTTP ``modern`` behind, or stdio), from a raw kept-alive client
(``http_call_trace.Client``); then attached again for as long while no call is made (uvicorn's 10 Hz ticks,
the gateway's timers), and that idle count is subtracted. strace slows the process, so only counts are read.
Usage: python benchmarks/harness/gateway_syscalls.py [--tree DIR] [--calls 1000] [--upstream http|stdio]
(``TMPDIR=/dev/shm``: the audit on tmpfs.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import http_call_trace as trace  # noqa: E402

_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def _counted(pid: int, out: Path, during: Callable[[], Any]) -> tuple[dict[str, int], float]:
    tracer = subprocess.Popen(["strace", "-c", "-f", "-o", str(out), "-p", str(pid)],
                              stderr=subprocess.DEVNULL)
    time.sleep(1.0)  # attached to every thread
    started = time.monotonic()
    during()
    seconds = time.monotonic() - started + 1.0
    tracer.send_signal(signal.SIGINT)
    tracer.wait(30)
    counts: dict[str, int] = {}
    for line in out.read_text().splitlines():
        m = _ROW.match(line)
        if m and m.group(2) != "total":
            counts[m.group(2)] = int(m.group(1))
    return counts, seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", default=str(HERE.parents[1]))
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--upstream", choices=("http", "stdio"), default="http")
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    data = Path(tempfile.mkdtemp(prefix="gateway-syscalls-"))
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)}
    up_port, port = trace._free_port(), trace._free_port()
    toolbox = subprocess.Popen([sys.executable, str(trace.TOOLBOX), "--http", str(up_port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    behind = ({"url": f"http://127.0.0.1:{up_port}/mcp", "protocol": "modern"} if args.upstream == "http"
              else {"command": sys.executable, "args": [str(trace.TOOLBOX)]})
    cfg = data / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": behind}, "sentinel": {
        "data_dir": str(data / "state"), "builtins": [], "http": {"token": trace.TOKEN}}}))
    cfg.chmod(0o600)
    gateway = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                                f"127.0.0.1:{port}"], cwd=tree, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    load0 = os.getloadavg()[0]
    try:
        trace._wait_port(up_port, toolbox)
        trace._wait_port(port, gateway)
        time.sleep(1.0)
        client = trace.Client(port, "noop", "modern", {})
        for _ in range(trace.WARM):
            client.call()
        busy, seconds = _counted(gateway.pid, data / "busy.txt",
                                 lambda: [client.call() for _ in range(args.calls)])
        idle, idle_seconds = _counted(gateway.pid, data / "idle.txt", lambda: time.sleep(seconds - 1.0))
    finally:
        for p in (gateway, toolbox):
            p.send_signal(signal.SIGTERM)
        for p in (gateway, toolbox):
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
    scale = seconds / idle_seconds
    print(f"gateway system calls a call ({args.calls} sequential HTTP 2026-07-28 calls, {args.upstream} "
          "upstream; "
          f"{tree}; load {load0:.1f} -> {os.getloadavg()[0]:.1f}); idle over {idle_seconds:.1f} s taken away")
    print(f"  {'call':>8} {'idle/s':>8}  kind")
    rows = []
    for kind in set(busy) | set(idle):
        per = (busy.get(kind, 0) - idle.get(kind, 0) * scale) / args.calls
        rows.append((per, idle.get(kind, 0) / idle_seconds, kind))
    for per, rate, kind in sorted(rows, reverse=True):
        if abs(per) >= 0.01 or rate >= 1:
            print(f"  {per:8.2f} {rate:8.1f}  {kind}")
    print(f"  {sum(r[0] for r in rows):8.2f} {sum(r[1] for r in rows):8.1f}  total")


if __name__ == "__main__":
    main()
