"""Would overlapping a durable audit commit with the call's next CPU work pay on this machine? (issue 21)

A call's decision row must be on disk before the call is forwarded; the work that follows it and does not
depend on it (building the upstream's line: ~45-70 us of the event loop's CPU, ``stdio_call_trace.py``) could
run while another thread commits. That costs two cross-thread wake-ups (the committing thread's, then the
loop's through its self-pipe). This times both shapes on a real SQLite file (WAL, ``synchronous=FULL``, one
~440-byte row a commit, as the audit's): ``inline``, the commit then the work on the loop's thread (what the
gateway does for a call alone); ``overlap``, the commit handed to a waiting thread while the loop does the
work, then the loop waits for the commit. Blocks alternate. Prints p50 / p90 us of the whole step and the
process's voluntary context switches a step, and when the committing thread began its commit: it needs the
GIL to enter ``execute``, which the loop's Python work holds (the switch interval is 5 ms), so it begins
only once the loop waits, and nothing overlaps.
Usage: python benchmarks/harness/commit_overlap.py [--dir /tmp] [--steps 1000] [--work-us 60]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import resource
import sqlite3
import statistics
import tempfile
import threading
import time

STARTS: list[float] = []  # when the committing thread began each commit
ENDS: list[tuple[float, float]] = []  # (hand-off, end of the loop's work) of each overlapped step


def busy(us: float) -> None:
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--work-us", type=float, default=60.0)
    ap.add_argument("--block", type=int, default=50)
    args = ap.parse_args()
    path = os.path.join(tempfile.mkdtemp(dir=args.dir, prefix="overlap-"), "a.db")
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    row = "x" * 440
    jobs: queue.SimpleQueue = queue.SimpleQueue()

    def writer() -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            loop, fut = job
            STARTS.append(time.perf_counter())
            db.execute("INSERT INTO t (body) VALUES (?)", (row,))
            loop.call_soon_threadsafe(fut.set_result, None)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()

    async def run() -> dict[str, tuple[list[float], int]]:
        loop = asyncio.get_running_loop()
        out: dict[str, tuple[list[float], int]] = {"inline": ([], 0), "overlap": ([], 0)}
        done = 0
        while done < args.steps:
            for mode in out:
                times, switches = out[mode]
                before = resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw
                for _ in range(args.block):
                    await asyncio.sleep(0)
                    t0 = time.perf_counter()
                    if mode == "inline":
                        db.execute("INSERT INTO t (body) VALUES (?)", (row,))
                        busy(args.work_us)
                    else:
                        fut = loop.create_future()
                        jobs.put((loop, fut))
                        busy(args.work_us)
                        ENDS.append((t0, time.perf_counter()))
                        await fut
                    times.append((time.perf_counter() - t0) * 1e6)
                out[mode] = (times, switches + resource.getrusage(resource.RUSAGE_SELF).ru_nvcsw - before)
            done += args.block
        return out

    load = os.getloadavg()[0]
    out = asyncio.run(run())
    jobs.put(None)
    print(f"commit + {args.work_us:.0f} us of work, {args.steps} steps each, blocks of {args.block} "
          f"alternated, {args.dir}; load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    lags = [(s - t0) * 1e6 for s, (t0, e) in zip(STARTS, ENDS)]
    after = sum(1 for s, (t0, e) in zip(STARTS, ENDS) if s >= e)
    print(f"  the thread began its commit {statistics.median(lags):.1f} us after the hand-off (p50); after "
          f"the loop's work ended in {after} of {len(lags)}")
    for mode, (times, switches) in out.items():
        s = sorted(times)
        print(f"  {mode:8} p50 {statistics.median(s):7.1f} us  p90 {s[len(s) * 9 // 10]:7.1f} us  "
              f"voluntary switches a step {switches / len(s):5.2f}")


if __name__ == "__main__":
    main()
