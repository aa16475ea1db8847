"""One audit row alone, committed three ways in ONE process on one log, blocks alternated (perf-inline):
``inline`` (on the caller's thread: ``SQLiteDatabase.write_inline``), ``writer`` (the writer thread, the
row in a batch: the path when inline commits are off) and ``writer-same`` (the writer thread with the inline
path's own statement: the row not batchable). Per way: p50 / p90 / mean wall ms of ``AuditLog.write``, the
process's CPU a row, its voluntary context switches a row and the ms a row its threads spent ready to run
but waiting for a CPU (all threads). Separates the thread from the statement when the two paths' wall times
differ.
Usage: python benchmarks/harness/inline_vs_writer.py [--rounds 16] [--block 100] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE)]
from audit_commit_ab import _entry  # noqa: E402

import sentinel_mcp.gateway.audit as audit  # noqa: E402
from sentinel_mcp.storage import inline_policy  # noqa: E402

WAYS = ("inline", "writer", "writer-same")


def switches() -> tuple[int, float]:
    """Voluntary context switches of all threads, and the seconds they spent ready to run, waiting for a CPU
    (``schedstat``: 0 on a kernel without it)."""
    total, waited = 0, 0.0
    for task in os.listdir("/proc/self/task"):
        try:
            status = Path(f"/proc/self/task/{task}/status").read_text()
            sched = Path(f"/proc/self/task/{task}/schedstat").read_text().split()
        except OSError:
            continue
        total += int(status.split("voluntary_ctxt_switches:")[1].split()[0])
        waited += int(sched[1]) / 1e9 if len(sched) > 1 else 0.0
    return total, waited


async def run(where: Path, rounds: int, block: int) -> dict[str, Any]:
    inline_policy.SLOW_S = inline_policy.STALL_S = float("inf")  # the rule never decides here: the way does
    log = await audit.AuditLog(where / "sentinel.db").open()
    db = log.db
    assert db is not None
    batchable = audit.batchable
    times: dict[str, list[float]] = {w: [] for w in WAYS}
    cpu = dict.fromkeys(WAYS, 0.0)
    sw = dict.fromkeys(WAYS, 0)
    queued = dict.fromkeys(WAYS, 0.0)
    i = 0
    try:
        for r in range(rounds):
            for way in WAYS if r % 2 == 0 else WAYS[::-1]:
                db.inline_policy._off_until = 0.0 if way == "inline" else float("inf")
                audit.batchable = batchable if way != "writer-same" else (lambda values, text: False)
                c0, s0 = time.process_time(), switches()
                for _ in range(block):
                    t0 = time.perf_counter()
                    await log.write(_entry(i // 2, "decision" if i % 2 == 0 else "outcome"), alone=True)
                    times[way].append((time.perf_counter() - t0) * 1000)
                    i += 1
                cpu[way] += time.process_time() - c0
                s1 = switches()
                sw[way] += s1[0] - s0[0]
                queued[way] += s1[1] - s0[1]
    finally:
        audit.batchable = batchable
        await log.close()
    return {"times": times, "cpu": cpu, "switches": sw, "queued": queued, "inline": db.inline_commits,
            "rows": i}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--block", type=int, default=100)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    where = Path(tempfile.mkdtemp(prefix="inline-vs-writer-", dir=args.dir))
    try:
        out = asyncio.run(run(where, args.rounds, args.block))
    finally:
        shutil.rmtree(where, ignore_errors=True)
    print(f"one audit row alone, {args.rounds} rounds of {args.block} rows a way, in {args.dir}; load "
          f"{load0:.1f} -> {os.getloadavg()[0]:.1f}; {out['inline']} of {out['rows']} rows inline")
    print(f"{'way':12} {'p50':>7} {'p90':>7} {'mean':>7} {'CPU/row':>8} {'switches/row':>13} "
          f"{'waited for a CPU/row':>21}")
    for way in WAYS:
        t = out["times"][way]
        print(f"{way:12} {statistics.median(t):7.3f} {statistics.quantiles(t, n=10)[8]:7.3f} "
              f"{statistics.mean(t):7.3f} {out['cpu'][way] * 1000 / len(t):8.3f} "
              f"{out['switches'][way] / len(t):13.2f} {out['queued'][way] * 1000 / len(t):21.3f}")


if __name__ == "__main__":
    main()
