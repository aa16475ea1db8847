"""Work per forwarded call at two concurrencies (issue 21, the real-upstream row): does anything on the
gateway's event loop grow with the number of calls in flight (a scan of the calls in flight, a queue walked,
turns taken per waiter)? The test toolbox over streamable HTTP behind a gateway of this tree
(``"protocol"`` as given, default guard, durable audit); for each concurrency a gateway of its own, wrk
warms it up, then cProfile counts the loop thread's function entries (``work_counts.py --serve``: between
SIGUSR1 and SIGUSR2) over ``--seconds`` of wrk at that many connections. Prints the entries per call and the
functions that changed most between the first concurrency and the last. A count, not a time: a busy machine
moves it little (cProfile counts a coroutine's every resumption as an entry).

Usage: python benchmarks/harness/concurrent_counts.py [--connections 1,16] [--seconds 6] [--protocol modern]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import TOKEN, call_body, call_headers, check_call, wrk  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402


def counts(direct: str, connections: int, seconds: float, protocol: str) -> tuple[int, dict[str, float]]:
    """(calls profiled, {function: entries per call}) for one gateway loaded at ``connections``."""
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-concurrent-"))
    cfg = tmp / "c.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"url": direct, "protocol": protocol}}, "sentinel": {
        "data_dir": str(tmp / "data"), "builtins": [], "rulebases": [str(ROOT / "rulebases" / "default.pl")],
        "http": {"token": TOKEN}}}))
    out, port = tmp / "main.prof", free_port()
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{HERE}", "WORK_COUNTS_OUT": str(out),
           "PYTHONWARNINGS": "ignore"}
    cmd = [sys.executable, str(HERE / "work_counts.py"), "--serve", str(ROOT), "-c", str(cfg), "serve",
           "--http", f"127.0.0.1:{port}"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=90)
        check_call(url, "tb__noop")
        body, headers = call_body("tb__noop"), call_headers("tb__noop")
        wrk(url, body, headers, connections=connections, seconds=2)  # warm-up
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(0.2)
        r = wrk(url, body, headers, connections=connections, seconds=seconds)
        os.kill(proc.pid, signal.SIGUSR2)
        for _ in range(300):
            if out.exists():
                break
            time.sleep(0.1)
        time.sleep(1.0)  # the dump finishing
    finally:
        stop_process(proc)
    n = max(r.requests, 1)
    per_call: dict[str, float] = {}
    for (file, _, name), (_, entries, *_rest) in pstats.Stats(str(out)).stats.items():  # type: ignore[attr-defined]
        where = re.sub(r".*site-packages/", "", file.replace(str(ROOT) + "/", ""))
        per_call[re.sub(r" at 0x[0-9a-f]+", "", f"{where}:{name}")] = entries / n
    return r.requests, per_call


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", default="1,16")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--protocol", choices=["modern", "auto"], default="modern")
    ap.add_argument("--top", type=int, default=20)
    args = ap.parse_args()
    levels = [int(c) for c in args.connections.split(",")]
    port = free_port()
    direct = f"http://127.0.0.1:{port}/mcp"
    up = pc.start([sys.executable, pc.TOOLBOX, "--http", str(port)], direct)
    results: dict[int, dict[str, float]] = {}
    try:
        for c in levels:
            calls, results[c] = counts(direct, c, args.seconds, args.protocol)
            total = sum(results[c].values())
            print(f"{c:3d} connections: {calls} calls profiled, {total:7.0f} function entries a call "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        stop_process(up)
    a, b = results[levels[0]], results[levels[-1]]
    change = sorted(set(a) | set(b), key=lambda k: b.get(k, 0) - a.get(k, 0))
    print(f"\nlargest increases, {levels[0]} -> {levels[-1]} connections (entries a call):")
    for k in reversed(change[-args.top:]):
        print(f"  {a.get(k, 0):8.2f} -> {b.get(k, 0):8.2f}  {k}")
    print("\nlargest decreases:")
    for k in change[: args.top // 2]:
        print(f"  {a.get(k, 0):8.2f} -> {b.get(k, 0):8.2f}  {k}")


if __name__ == "__main__":
    main()
