"""A timeline of the real-upstream capacity row (issue 21): where a forwarded call waits when 16 clients
load Sentinel in front of a real Python MCP upstream, and whether the upstream idles while calls wait for the
audit.

The gateway runs with timers (``--serve``, this file as its entry point): each call's ``Gateway.run``, its
decision row (``CallRecord.decided``, which waits for the durable commit), the forward
(``Upstream.call_tool``), its outcome row (``CallRecord.finished``), every commit of the storage writer (its
thread, with the group's size) and each row's wait. On exit it writes them as JSON. The driver starts the
toolbox over streamable HTTP, measures its direct rate with wrk, then Sentinel in front of it (``"protocol"``
as given), loads it, stops it and prints, over the run's middle (the first and last second left out):

- the segments of a call (medians): before the decision row is asked for, the decision row's wait, the
  forward, the outcome row's wait, after it;
- the forwards in flight at the upstream over time: the share of time with none (the upstream has nothing to
  do from Sentinel) and the mean, against the 16 calls in flight;
- the share of time with no forward in flight while calls wait for a row (the upstream idles on the audit);
- the writer: commits per second, calls' rows per commit, a commit's duration.

Usage: python benchmarks/harness/upstream_timeline.py [--seconds 5] [--protocol modern] [--data DIR]
(``--data /dev/shm/x``: the audit on tmpfs, fsync free, to compare.)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def serve() -> None:
    """In the gateway's process: timers, then the CLI."""
    import atexit
    import contextvars
    import functools
    import itertools

    from sentinel_mcp.gateway.call_record import CallRecord
    from sentinel_mcp.gateway.core import Gateway
    from sentinel_mcp.gateway.upstream import Upstream
    from sentinel_mcp.storage.sqlite import SQLiteDatabase

    # (call, start, end) per label; a call is numbered when its Gateway.run starts, and the tasks it starts
    # inherit the number (a context variable)
    labels = ("run", "decided", "forward", "finished")
    spans: dict[str, list[tuple[int, float, float]]] = {k: [] for k in labels}
    commits: list[tuple[float, float, int]] = []
    lock = threading.Lock()
    call_id: contextvars.ContextVar[int] = contextvars.ContextVar("call_id", default=0)
    numbers = itertools.count(1)

    # each write job: queued (loop), committed (writer thread: its answer handed over), resumed (loop)
    jobs: list[list[float]] = []
    lags: list[float] = []  # how late a 1 ms sleep of the event loop wakes
    current: list[list[float]] = []
    submit, answer = SQLiteDatabase._submit, SQLiteDatabase._answer

    def submit_timed(self: Any, kind: str, payload: Any) -> Any:
        rec = [time.perf_counter(), 0.0, 0.0]
        current[:] = [rec]
        fut = submit(self, kind, payload)
        if kind == "write":
            jobs.append(rec)
            fut.add_done_callback(lambda _: rec.__setitem__(2, time.perf_counter()))
        return fut

    def answer_timed(self: Any, loop: Any, fut: Any) -> Any:
        done, rec = answer(self, loop, fut), current[0]

        def w(value: Any, error: BaseException | None) -> None:
            rec[1] = time.perf_counter()
            done(value, error)

        return w

    SQLiteDatabase._submit = submit_timed  # type: ignore[method-assign]
    SQLiteDatabase._answer = answer_timed  # type: ignore[method-assign]

    async def lag_probe() -> None:
        import asyncio

        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append(time.perf_counter() - t - 0.001)

    probing: list[Any] = []

    def timed(cls: Any, name: str, label: str) -> None:
        f = getattr(cls, name)

        @functools.wraps(f)
        async def w(*a: Any, **k: Any) -> Any:
            if label == "run":
                call_id.set(next(numbers))
                if not probing:
                    import asyncio

                    probing.append(asyncio.get_running_loop().create_task(lag_probe()))
            t = time.perf_counter()
            try:
                return await f(*a, **k)
            finally:
                spans[label].append((call_id.get(), t, time.perf_counter()))

        setattr(cls, name, w)

    timed(Gateway, "run", "run")
    timed(CallRecord, "decided", "decided")
    timed(CallRecord, "finished", "finished")
    timed(Upstream, "call_tool", "forward")
    commit = SQLiteDatabase._commit_group

    @functools.wraps(commit)
    def commit_timed(self: Any, group: list[Any]) -> None:
        t = time.perf_counter()
        try:
            commit(self, group)
        finally:
            with lock:
                commits.append((t, time.perf_counter(), len(group)))

    SQLiteDatabase._commit_group = commit_timed  # type: ignore[method-assign]

    def dump() -> None:
        with lock:
            out = {"spans": spans, "commits": commits, "jobs": jobs, "lags": lags}
            Path(os.environ["TIMELINE"]).write_text(json.dumps(out))

    atexit.register(dump)
    if os.environ.get("TIMELINE_SWITCH"):  # the GIL's switch interval (Python's default 5 ms), to compare
        sys.setswitchinterval(float(os.environ["TIMELINE_SWITCH"]))
    from sentinel_mcp.cli import main

    sys.argv = [sys.argv[0], *sys.argv[2:]]
    sys.exit(main())


def share_of(intervals: list[tuple[float, float]], lo: float, hi: float, step: float = 0.0001) -> list[int]:
    """How many intervals cover each tick of [lo, hi)."""
    n = int((hi - lo) / step)
    delta = [0] * (n + 1)
    for a, b in intervals:
        i, j = max(0, int((a - lo) / step)), min(n, int((b - lo) / step))
        if i < j:
            delta[i] += 1
            delta[j] -= 1
    out, c = [], 0
    for i in range(n):
        c += delta[i]
        out.append(c)
    return out


def analyse(data: dict[str, Any]) -> None:
    spans = {k: [(int(c), a, b) for c, a, b in v] for k, v in data["spans"].items()}
    runs = spans["run"]
    if not runs:
        sys.exit("no calls timed")
    lo, hi = min(a for _, a, _ in runs) + 1.0, max(b for _, _, b in runs) - 1.0
    by_call: dict[str, dict[int, tuple[float, float]]] = {
        k: {c: (a, b) for c, a, b in spans[k] if c} for k in ("decided", "forward", "finished")}
    inside = [(c, a, b) for c, a, b in runs if lo <= a and b <= hi]
    names = ("before", "decision row", "forward", "outcome row", "after", "whole")
    seg: dict[str, list[float]] = {k: [] for k in names}
    for c, a, b in inside:
        d, f, o = (by_call[k].get(c) for k in ("decided", "forward", "finished"))
        if not (d and f and o):
            continue
        seg["before"].append(d[0] - a)
        seg["decision row"].append(d[1] - d[0])
        seg["forward"].append(f[1] - f[0])
        seg["outcome row"].append(o[1] - o[0])
        seg["after"].append(b - o[1])
        seg["whole"].append(b - a)
    n = len(seg["whole"])
    print(f"{len(inside)} calls in the middle {hi - lo:.1f} s ({len(inside) / (hi - lo):.0f}/s); "
          f"{n} with all their spans")
    print("segment of a call (ms)        p50     mean")
    for k, v in seg.items():
        if v:
            print(f"  {k:26} {1000 * statistics.median(v):7.2f}  {1000 * statistics.fmean(v):7.2f}")
    fwd = share_of([(a, b) for _, a, b in spans["forward"]], lo, hi)
    waiting = share_of([(a, b) for k in ("decided", "finished") for _, a, b in spans[k]], lo, hi)
    calls = share_of([(a, b) for _, a, b in runs], lo, hi)
    ticks = len(fwd)
    none = sum(1 for x in fwd if x == 0) / ticks
    idle_on_audit = sum(1 for x, w in zip(fwd, waiting) if x == 0 and w > 0) / ticks
    print(f"forwards in flight: mean {statistics.fmean(fwd):.2f} of {statistics.fmean(calls):.2f} calls in "
          f"flight; none {100 * none:.1f}% of the time; none while calls wait for a row "
          f"{100 * idle_on_audit:.1f}%")
    cs = [(a, b, g) for a, b, g in data["commits"] if lo <= a and b <= hi]
    if cs:
        busy = share_of([(a, b) for a, b, _ in cs], lo, hi)
        per = statistics.fmean(g for *_, g in cs)
        print(f"writer: {len(cs) / (hi - lo):.0f} commits/s, {per:.1f} jobs per "
              f"commit, a commit {1000 * statistics.median(b - a for a, b, _ in cs):.2f} ms p50, committing "
              f"{100 * sum(1 for x in busy if x) / len(busy):.0f}% of the time")
    js = [j for j in data["jobs"] if lo <= j[0] and 0 < j[1] <= j[2] <= hi]
    if js:
        queued = [b - a for a, b, _ in js]
        resumed = [c - b for _, b, c in js]
        print(f"a row's wait (ms p50 / mean): queued until its commit is done "
              f"{1000 * statistics.median(queued):.2f} / {1000 * statistics.fmean(queued):.2f}, "
              f"then until the event loop resumes it {1000 * statistics.median(resumed):.2f} / "
              f"{1000 * statistics.fmean(resumed):.2f} ({len(js)} rows)")
    if data["lags"]:
        lg = sorted(data["lags"])
        print(f"event loop: a 1 ms sleep wakes late by {1000 * lg[len(lg) // 2]:.2f} ms p50, "
              f"{1000 * lg[int(len(lg) * 0.9)]:.2f} ms p90 ({len(lg)} sleeps)")


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all cores so far (/proc/stat)."""
    f = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = f[3] + f[4]  # idle + iowait
    return sum(f) - idle, sum(f)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve()
        return
    sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
    import pipeline_capacity as pc
    from load import call_body, call_headers, proc_cpu, wrk

    from tests.conftest import stop_process

    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--protocol", choices=["auto", "legacy", "modern"], default="modern")
    ap.add_argument("--data", help="the gateway's data directory (default: a temporary one on disk)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-timeline-"))
    data = Path(args.data) if args.data else tmp / "data"
    data.mkdir(parents=True, exist_ok=True)
    port = pc.free_port()
    direct = f"http://127.0.0.1:{port}/mcp"
    up = pc.start([sys.executable, pc.TOOLBOX, "--http", str(port)], direct)
    try:
        b0 = machine_busy()
        d = wrk(direct, call_body("noop"), call_headers("noop", token=None), seconds=args.seconds,
                server_pid=up.pid)
        b1 = machine_busy()
        cores = os.cpu_count() or 1
        print(f"direct           {pc.fmt(d)}  machine {cores * (b1[0] - b0[0]) / (b1[1] - b0[1]):.2f} of "
              f"{cores} cores busy")
        cfg = tmp / "sentinel.json"
        cfg.write_text(json.dumps({"mcpServers": {"tb": {"url": direct, "protocol": args.protocol}},
                                   "sentinel": {"data_dir": str(data), "builtins": [],
                                                "rulebases": [str(ROOT / "rulebases" / "default.pl")],
                                                "http": {"token": pc.TOKEN}}}))
        timeline = tmp / "timeline.json"
        gport = pc.free_port()
        env = {**pc.ENV, "TIMELINE": str(timeline), "PYTHONPATH": str(ROOT)}
        gw = pc.start([sys.executable, str(Path(__file__).resolve()), "--serve", "-c", str(cfg), "serve",
                       "--http", f"127.0.0.1:{gport}"], f"http://127.0.0.1:{gport}/healthz", env=env)
        url = f"http://127.0.0.1:{gport}/mcp"
        try:
            wrk(url, call_body("tb__noop"), call_headers("tb__noop"), seconds=1, server_pid=gw.pid)  # warm up
            up0, b0 = proc_cpu(up.pid), machine_busy()
            t0 = time.perf_counter()
            r = wrk(url, call_body("tb__noop"), call_headers("tb__noop"), seconds=args.seconds,
                    server_pid=gw.pid)
            up1, b1, wall = proc_cpu(up.pid), machine_busy(), time.perf_counter() - t0
            print(f"through Sentinel {pc.fmt(r)}  ratio {r.rate / max(d.rate, 1e-9):.2f}  "
                  f"(protocol {args.protocol}, data {data})")
            busy = cores * (b1[0] - b0[0]) / (b1[1] - b0[1])
            print(f"  machine {busy:.2f} of {cores} cores busy; upstream {(up1 - up0) / wall:.2f} core "
                  f"({1000 * (up1 - up0) / max(r.requests, 1):.2f} ms per call)")
            gw.send_signal(signal.SIGINT)
            gw.wait(30)
        finally:
            stop_process(gw)
        analyse(json.loads(timeline.read_text()))
    finally:
        stop_process(up)


if __name__ == "__main__":
    main()
