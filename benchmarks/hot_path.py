"""Issue 21 (the hot path), every goal in one run, one table: row | measured | goal | met?

Rows: the airline cancel guard at 100k facts (fast path, lazy proof; at ``PolicyGuard.decide`` and inside the
engine; beside them without goals: from a thread without a SWI-Prolog engine of its own, with the kept proof
rendered as the gateway's guard does for its audit row, and with the proof written in the pass); the added
latency of one sequential no-op call over stdio and streamable HTTP in both protocol eras
(``proxy_overhead.py``: alternated; over HTTP the same toolbox server behind both sides, and the earlier shape
with a stdio upstream beside it), and in the same alternation the gateways with their data dir on tmpfs (the
pipeline's CPU and hops without the disk); capacity with 16 HTTP clients to an in-process no-op built-in with
the durable audit on, wrk's CPU share beside it; a real Python MCP upstream direct against through Sentinel;
the airline example's read tool the guard learns facts from, direct against through Sentinel with the airline
rulebase (both eras); the peers (mcp-proxy, ContextForge's translate) beside direct and Sentinel; one stdio
client's 16 parallel calls of a 50 ms tool, direct and through Sentinel (``parallel_calls.py``); cold start of
``serve`` on the embedded default to its first ``tools/list``; RSS after 1k calls and after N, of the no-op
and of the guard's own path (an airline cancel in a conversation of its own: a session loaded, a fetch, facts
learned; ``pipeline_capacity.py``); first, the machine's speed (a Python and a SWI-Prolog loop) and the work
per call counted (``harness/work_counts.py``: inferences per decision, Python function calls per HTTP call),
which a slow or busy machine does not move. Each part is bounded (by calls or seconds); the load generator is
wrk. Usage: python benchmarks/hot_path.py [--quick] [--skip
machine,work,guard,latency,floor,capacity,upstream,airline,peers,parallel,cold,memory,memory-guarded]
--quick: 100 decisions, 100 sequential calls, 3 s loads, memory 1k -> 10k calls, the guard's path 1k -> 5k
(about 5 minutes idle) default: 300 decisions, 300 calls, 8 s loads, memory 1k -> 100k calls, the guard's
path 1k -> 20k (about 18 minutes idle) """

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT.parent), str(ROOT)]
import guard_latency as gl  # noqa: E402
import parallel_calls  # noqa: E402
import pipeline_capacity as pc  # noqa: E402
import proxy_overhead as po  # noqa: E402

Row = tuple[str, str, str, "bool | None"]


async def guard_rows(tmp: Path, n: int, facts: int) -> list[Row]:
    async with gl.allowed_airline_guard(tmp, facts) as (guard, c):
        guard.fast_path = guard.lazy_proofs = True  # the proof kept, rendered when read
        at_decide = await gl.timed_decisions(guard, c, n)
        in_engine = await gl.in_engine(guard, c, n, True, lazy=True)
        hop = await gl.from_other_thread(guard, c, n)
        # the gateway's guard: the proof kept, then rendered for the audit row
        rendered = await gl.timed_decisions(guard, c, n, render=True)
        guard.lazy_proofs = False  # the reference: the proof written in the pass
        written = await gl.timed_decisions(guard, c, n)
    out: list[Row] = []
    for label, t in (("PolicyGuard.decide", at_decide), ("inside the engine (its CPU clock)", in_engine)):
        p50, p99 = gl.pct(t, 0.5), gl.pct(t, 0.99)
        out.append((f"guard: airline cancel, {facts // 1000}k facts, {label}",
                    f"p50 {1000 * p50:.0f} us, p99 {1000 * p99:.0f} us ({len(t)} decisions)",
                    "p50 <= 100 us, p99 <= 1 ms", p50 <= 0.1 and p99 <= 1.0))
    for label, t in (("PolicyGuard.decide on a thread without its own engine (a job)", hop),
                     ("PolicyGuard.decide + its proof rendered (the gateway's guard, for the audit row)",
                      rendered),
                     ("PolicyGuard.decide, proof written in the pass (lazy_proofs=False)", written)):
        p50, p99 = gl.pct(t, 0.5), gl.pct(t, 0.99)
        out.append((f"guard: airline cancel, {facts // 1000}k facts, {label}",
                    f"p50 {1000 * p50:.0f} us, p99 {1000 * p99:.0f} us ({len(t)} decisions)", "", None))
    return out


TMPFS = ", data dir on tmpfs"


def latency_rows(calls: int) -> list[Row]:
    """The added latency under each ``sentinel.audit.sync`` (``"full"``, the default: each row on disk
    before its call goes on; ``"process"``: in the OS cache, survives the gateway's kill -9, not a power cut),
    both with the goal, and in the same alternation the same gateways with their data dir on ``/dev/shm``:
    those rows (no goal of their own) are the pipeline's CPU and hops without the disk's two syncs a call, so
    the disk row minus the tmpfs row is what the durable record's ``fdatasync`` costs on this disk."""
    rows, _, _ = po.measure(calls, 0, tmpfs=True, process=True)
    out: list[Row] = []
    for label, d, p in sorted(rows, key=lambda r: (r[0].endswith(TMPFS), r[0].endswith(po.SYNC_PROCESS))):
        added = statistics.median(p) - statistics.median(d)
        tmpfs = label.endswith(TMPFS)
        full = "" if label.endswith(po.SYNC_PROCESS) else ', audit sync "full"'
        name = (f"added latency, data dir on tmpfs (CPU and hops, no disk), {label.removesuffix(TMPFS)}"
                if tmpfs else f"added latency, one sequential no-op call, {label}{full}")
        out.append((name, f"{added:+.2f} ms p50 (direct {statistics.median(d):.2f} -> Sentinel "
                    f"{statistics.median(p):.2f} ms; p99 {po.pct(d, 0.99):.2f} -> {po.pct(p, 0.99):.2f})",
                    "" if tmpfs else "<= 0.5 ms p50", None if tmpfs else added <= 0.5))
    return out


def floor_rows(tmp: Path, commits: int = 300) -> list[Row]:
    """What the durable record alone costs a call on the data dir's file system: a call's decision row is
    synced before it is forwarded and its outcome row before it is answered (docs/durability.md), two
    commits in series that no CPU cut shortens. Measured as the audit commits (SQLite WAL, one row of ~600
    bytes a commit) in a file beside the gateways' data dirs, under each ``sentinel.audit.sync``: FULL
    (``"full"``) and NORMAL (``"process"``, no fsync)."""
    import sqlite3

    out: list[Row] = []
    for sync, pragma in (("full", "FULL"), ("process", "NORMAL")):
        path = tmp / f"floor-{sync}.db"
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={pragma}")
            conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, row TEXT)")
            times = []
            for _ in range(commits):
                t = time.perf_counter()
                conn.execute("INSERT INTO t (row) VALUES (?)", ("x" * 600,))
                times.append(time.perf_counter() - t)
        finally:
            conn.close()
        p50 = statistics.median(times) * 1000
        out.append((f"the record's floor: two one-row commits a call, in series, audit sync \"{sync}\" "
                    f"(synchronous={pragma})",
                    f"{2 * p50:.2f} ms (one commit p50 {p50:.3f} ms, p99 "
                    f"{po.pct(times, 0.99) * 1000:.2f} ms, on {tmp}'s file system)", "", None))
    return out


def machine_rows() -> list[Row]:
    """How fast this machine runs Python and SWI-Prolog now: some goals were met when a 10M-step Python loop
    (module level, interpreter start included) took about 0.5 s; on a slower or busier machine every timed row
    moves with it, the counts (``work`` rows) do not."""
    # at module level, as `python3 -c` runs it (the figure the notes compare across sessions)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "s = 0\nfor i in range(10_000_000): s += i"], check=True)
    loop = time.perf_counter() - t
    swipl = subprocess.run(
        ["swipl", "-q", "-g", "statistics(cputime, T0), numlist(1, 3000000, L), sum_list(L, _), "
         "msort(L, _), statistics(cputime, T1), T is T1 - T0, format('~3f', [T]), halt"],
        capture_output=True, text=True, timeout=120)
    prolog = swipl.stdout.strip() or "?"
    return [("machine: a 10M-step Python loop / a SWI-Prolog list of 3M summed and sorted",
             f"{loop:.2f} s / {prolog} s (the loop took ~0.5 s when guard, capacity and cold start were met)",
             "", None)]


def work_rows(calls: int) -> list[Row]:
    """The work per call, counted (``harness/work_counts.py``): figures the machine's speed does not move."""
    p = subprocess.run([sys.executable, str(ROOT / "harness" / "work_counts.py"), "--calls", str(calls)],
                       capture_output=True, text=True, timeout=900)
    out: list[Row] = []
    for line in p.stdout.splitlines():
        for label in ("SWI-Prolog inferences per decision", "Python function calls per call",
                      "Python function calls per PolicyGuard.decide"):
            if label in line:
                name, _, value = line.rstrip().rpartition(" ")
                out.append((f"work: {name.strip()}", value, "", None))
    if not out:
        raise RuntimeError(f"work_counts.py gave no figures: {p.stderr[-300:]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--skip", default="",
        help="comma-separated: machine,work,guard,latency,floor,capacity,upstream,airline,peers,parallel,"
        "cold,memory,memory-guarded")
    ap.add_argument("--memory-calls", type=int, default=0, help="default 100k (10k with --quick)")
    args = ap.parse_args()
    if not pc.have_wrk():
        sys.exit("wrk is not installed (make bench installs it through apt)")
    skip = set(filter(None, args.skip.split(",")))
    decisions, calls, seconds = (100, 100, 3.0) if args.quick else (300, 300, 8.0)
    memory_calls = args.memory_calls or (10_000 if args.quick else 100_000)
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-hot-path-"))
    rows: list[Row] = []
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    steps = [
        ("machine", lambda: rows.extend(machine_rows())),
        ("work", lambda: rows.extend(work_rows(calls))),
        ("guard", lambda: rows.extend(asyncio.run(guard_rows(tmp, decisions, 100_000)))),
        ("latency", lambda: rows.extend(latency_rows(calls))),
        ("floor", lambda: rows.extend(floor_rows(tmp))),
        ("cold", lambda: pc.cold_start(tmp, rows, runs=3 if args.quick else 5)),
        ("capacity", lambda: pc.capacity(tmp, seconds, rows)),
        ("upstream", lambda: pc.real_upstream(tmp, seconds, rows)),
        ("airline", lambda: pc.airline_read(tmp, seconds, rows)),
        ("peers", lambda: pc.peers(tmp, seconds, rows)),
        ("parallel", lambda: rows.extend(parallel_calls.rows(seconds))),
        ("memory", lambda: pc.memory(tmp, memory_calls, rows)),
        ("memory-guarded", lambda: pc.memory_guarded(tmp, 5_000 if args.quick else 20_000, rows)),
    ]
    for name, step in steps:
        if name in skip:
            continue
        print(f"... {name}", file=sys.stderr, flush=True)
        try:
            step()
        except Exception as e:  # noqa: BLE001 - one part failing still prints the others, and says why
            rows.append((f"{name}: not measured", f"{type(e).__name__}: {e}"[:200], "", False))
    print(f"\nIssue 21, the hot path: every goal in one run ({os.cpu_count()} cores, load average "
          f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, {time.perf_counter() - t0:.0f} s; "
          "CPU = seconds per second, 1.00 = one core; load generator wrk, 1 thread)\n")
    width = max(len(r[0]) for r in rows)
    fig = max(len(r[1]) for r in rows)
    print(f"{'row':{width}}  {'measured':{fig}}  {'goal':27}  met?")
    for label, figure, goal, met in rows:
        verdict = "" if met is None else ("met" if met else "NOT MET")
        print(f"{label:{width}}  {figure:{fig}}  {goal:27}  {verdict}")


if __name__ == "__main__":
    main()
