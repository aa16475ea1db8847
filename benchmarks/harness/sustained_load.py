"""A load held for minutes, in windows: what a short run cannot show (a periodic job that stops the calls).

16 wrk connections for ``--seconds`` (default 150: past two purges of expired facts, which run every 60 s and
find a minute's facts from the second one on), reported every ``--window`` seconds with the gateway's CPU per
call, then the worst window beside the median. Targets: ``airline`` (the airline read the guard learns ~26
facts from, each call its own conversation: ``pipeline_capacity.airline_read``'s load; facts for 60 s) or
``noop`` (the in-process no-op built-in: the durable audit alone).

The 2026-12-01 run that found the purge holding the facts writer: windows at ~450/s, then 63/s and 0/s for
about ten seconds at t=125-135 s; after the batched purge the worst window was 375/s (benchmarks/README.md).

Usage: python benchmarks/harness/sustained_load.py [--target airline|noop] [--seconds 150] [--window 5]
  [--tree TREE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import MODERN, TOKEN, call_body, call_headers, check_call, wrk  # noqa: E402
from tests.conftest import stop_process  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=["airline", "noop"], default="airline")
    ap.add_argument("--seconds", type=float, default=150.0)
    ap.add_argument("--window", type=float, default=5.0)
    ap.add_argument("--tree", default=str(ROOT), help="the source tree whose gateway runs (default: this)")
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    venv_python = tree / ".venv" / "bin" / "python"
    pc.PY = str(venv_python) if venv_python.exists() else sys.executable
    pc.HARNESS = tree / "benchmarks" / "harness"
    pc.ENV = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)}
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-sustained-"))
    up = proc = None
    try:
        if args.target == "airline":
            port = pc.free_port()
            direct = f"http://127.0.0.1:{port}/mcp"
            up = pc.start([sys.executable, "-m", "examples.airline", "--http", str(port)], direct,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
            started = time.monotonic()
            proc, url = pc.sentinel(tmp, {"airline": {"url": direct}}, [], "sustained", pc.AIRLINE_RULEBASES,
                                    pc.AIRLINE_SEEDS)
            tool, arguments = "airline__get_reservation_details", {"reservation_id": "8C8K4E"}
        else:
            started = time.monotonic()
            proc, url = pc.sentinel(tmp, {}, ["bench"], "sustained")
            tool, arguments = "bench__noop", None
        check_call(url, tool, MODERN, None, TOKEN, arguments)
        body, headers = call_body(tool, MODERN, arguments), call_headers(tool, MODERN, None)
        windows = []
        while time.monotonic() - started < args.seconds:
            r = wrk(url, body, headers, seconds=args.window, server_pid=proc.pid)
            windows.append(r)
            print(f"t={time.monotonic() - started:5.0f} s  {pc.fmt(r)}", flush=True)
        size = sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file()) / 1e6
    finally:
        if proc is not None:
            stop_process(proc)
        if up is not None:
            stop_process(up)
    rates = [w.rate for w in windows]
    worst = min(windows, key=lambda w: w.rate)
    print(f"\n{args.target}: {len(windows)} windows of {args.window:.0f} s; "
          f"median {statistics.median(rates):.0f}/s, "
          f"worst window {worst.rate:.0f}/s (its p99 {worst.p99_ms:.0f} ms; the highest p99 of any window "
          f"{max(w.p99_ms for w in windows):.0f} ms); data dir {size:.0f} MB at the end")


if __name__ == "__main__":
    main()
