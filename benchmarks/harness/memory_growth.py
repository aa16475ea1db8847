"""Where the gateway's memory grows between 1k calls and N (issue 21's memory goal): the pipeline benchmark's
gateway (in-process no-op built-in, default rulebase, durable audit) under ``memory_probe.py``, loaded by
``wrk`` (16 connections, 2026-07-28 single-request calls, each a new conversation) to each mark; at each
mark a probe report (RSS, tracemalloc, gc, object counts, SWI-Prolog's statistics). Prints RSS per mark and
the largest growths between the first and the last mark: allocation sites, object types, Prolog figures.
``--airline``: instead, the airline example's server over streamable HTTP behind the gateway with the shipped
airline rulebase, and every call a ``cancel_reservation`` in a conversation of its own: the guard loads the
conversation into the engine, fetches the reservation (tools before questions), learns its facts and decides
(denied: not the current user's). The path the no-op leaves out: session modules, mirrored facts, texts
passed to SWI-Prolog (2026-12-01: three leaks there, ~8.5 KB a call; benchmarks/README.md).
Usage: python benchmarks/harness/memory_growth.py [--marks 1000,20000,100000] [--top 25] [--out DIR]
  [--airline] [--trim] [--settle SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

HARNESS = Path(__file__).resolve().parent
ROOT = HARNESS.parent.parent
sys.path[:0] = [str(ROOT), str(HARNESS), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import TOKEN, call_body, call_headers, check_call, rss_mb, wrk  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402
import subprocess  # noqa: E402


def probe(pid: int, path: Path) -> dict:
    before = path.stat().st_mtime_ns if path.exists() else 0
    os.kill(pid, signal.SIGUSR1)
    for _ in range(1200):  # 120 s at most (a snapshot of a large heap under load takes seconds)
        if path.exists() and path.stat().st_mtime_ns != before:
            return json.loads(path.read_text())
        time.sleep(0.1)
    raise RuntimeError("the probe did not answer")


def _native_text(report: dict) -> str:
    """The probe's memory outside Python objects (SQLite's heap, malloc's mapped and free bytes), in MB."""
    n = report.get("native", {})
    mb = {k: (f"{v / 1024:.1f}" if isinstance(v, int) else "?") for k, v in n.items() if k.endswith("_kb")}
    return (f"SQLite {mb.get('sqlite_kb', '?')} MB  malloc mapped {mb.get('malloc_mapped_kb', '?')} MB, free "
            f"{mb.get('malloc_free_kb', '?')} MB in {n.get('malloc_arenas', '?')} arenas  Python blocks "
            f"{n.get('python_blocks', '?')}  idle trims {n.get('idle_trims', '?')}")


def _trimmed(report: dict) -> str:
    kb = report.get("rss_trimmed_kb")
    return f"  RSS after malloc_trim {kb / 1024:.1f} MB" if kb else ""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--marks", default="1000,20000,100000")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out", default="")
    ap.add_argument("--no-trace", action="store_true", help="no tracemalloc (full speed; RSS, gc, Prolog)")
    ap.add_argument("--trim", action="store_true",
                    help="at each mark, after RSS, malloc_trim(0) and RSS again (what a trim would give)")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="seconds idle before each probe (a quiet gateway trims its heaps: idle_trim.py)")
    ap.add_argument("--airline", action="store_true", help="the airline guard's path (see above)")
    args = ap.parse_args()
    marks = [int(m) for m in args.marks.split(",")]
    tmp = Path(args.out or tempfile.mkdtemp(prefix="sentinel-memory-"))
    tmp.mkdir(parents=True, exist_ok=True)
    cfg = tmp / "memory.json"
    sentinel: dict = {"data_dir": str(tmp / "data"), "builtins": ["bench"],
                      "rulebases": [str(ROOT / "rulebases" / "default.pl")], "http": {"token": TOKEN}}
    servers: dict = {}
    tool, arguments, up = "bench__noop", None, None
    if args.airline:
        up_port = free_port()
        servers = {"airline": {"url": f"http://127.0.0.1:{up_port}/mcp"}}
        sentinel.update(builtins=[], seeds=pc.AIRLINE_SEEDS,
                        rulebases=[str(ROOT / "rulebases" / n) for n in pc.AIRLINE_RULEBASES])
        tool, arguments = pc.AIRLINE_CANCEL
        up = subprocess.Popen([sys.executable, "-m", "examples.airline", "--http", str(up_port)], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    cfg.write_text(json.dumps({"mcpServers": servers, "sentinel": sentinel}))
    port = free_port()
    report = tmp / "probe.json"
    try:
        if up is not None:
            wait_http(servers["airline"]["url"], proc=up, timeout=60)  # (a GET: a 4xx once it is up)
        proc = subprocess.Popen(
            [sys.executable, str(HARNESS / "memory_probe.py"), "-c", str(cfg), "serve", "--http",
             f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp / "server.log", "w"), start_new_session=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore", "MEMORY_PROBE": str(report),
                 "MEMORY_PROBE_FRAMES": "0" if args.no_trace else "1",
                 "MEMORY_PROBE_TRIM": "1" if args.trim else "0"},
        )
    except BaseException:
        if up is not None:
            stop_process(up)
        raise
    url = f"http://127.0.0.1:{port}/mcp"
    reports: dict[int, dict] = {}
    t0 = time.perf_counter()
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        body, headers = call_body(tool, arguments=arguments), call_headers(tool)
        if args.airline:  # denied, as expected (an isError answer: wrk's script counts each as a bad answer)
            pc.check_denied(url, body, headers)
        else:
            check_call(url, tool)
        done = 1
        for goal in marks:
            while done < goal:
                step = 1 if goal - done < 1500 else 5
                # the airline path takes ~20 ms a call: 4 connections keep each under wrk's 2 s timeout
                r = wrk(url, body, headers, connections=4 if args.airline else 16, seconds=step)
                done += r.requests
                if r.errors and not args.airline:
                    raise RuntimeError(f"{r.errors} errors during the memory run")
            time.sleep(args.settle)
            reports[goal] = probe(proc.pid, report)
            reports[goal]["calls"] = done
            (tmp / f"probe-{goal}.json").write_text(json.dumps(reports[goal]))
            print(f"{done:7d} calls  RSS {reports[goal]['rss_kb'] / 1024:7.1f} MB  traced "
                  f"{reports[goal]['traced'] / 2**20:6.1f} MB  objects {reports[goal]['objects']:8d}  "
                  f"({time.perf_counter() - t0:.0f} s)  {_native_text(reports[goal])}"
                  f"{_trimmed(reports[goal])}", flush=True)
        print(f"RSS now (after the last probe): {rss_mb(proc.pid):.1f} MB")
    finally:
        stop_process(proc)
        if up is not None:
            stop_process(up)
    first, last = reports[marks[0]], reports[marks[-1]]
    print(f"\nRSS {first['rss_kb'] / 1024:.1f} -> {last['rss_kb'] / 1024:.1f} MB "
          f"({last['rss_kb'] / first['rss_kb'] - 1:+.1%}); traced {first['traced'] / 2**20:.1f} -> "
          f"{last['traced'] / 2**20:.1f} MB; reports in {tmp}")
    print(f"\nallocation sites, growth {marks[0]} -> {marks[-1]} calls (bytes, blocks):")
    sites = {k: (v[0] - first["sites"].get(k, [0, 0])[0], v[1] - first["sites"].get(k, [0, 0])[1])
             for k, v in last["sites"].items()}
    for k, (size, count) in sorted(sites.items(), key=lambda kv: -kv[1][0])[: args.top]:
        print(f"  {size:+11d} B {count:+8d}  {k}")
    print("\nobject types, growth:")
    types = {k: v - first["types"].get(k, 0) for k, v in last["types"].items()}
    for k, n in sorted(types.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {n:+9d}  {k}")
    print("\nSWI-Prolog statistics:")
    for k, v in last["prolog"].items():
        print(f"  {k:18} {first['prolog'].get(k)} -> {v}")


if __name__ == "__main__":
    main()
