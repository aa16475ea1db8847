"""How often this disk's commits are slow, and what each rule for leaving the caller's thread would have done
with them (issue 21, branch perf-inline). One process writes audit rows of a no-op call's size through
``AuditLog.write(alone=True)`` with every commit kept on the caller's thread (the rule off), one after
another with ``--gap`` ms between rows (a sequential client's pace: ~1 ms a call, two rows), and records
each commit's duration and end. Then it replays that trace through:

- the rule before perf-inline: one commit over 20 ms turns inline commits off for 30 s;
- this tree's ``InlinePolicy`` (``sentinel_mcp/storage/inline_policy.py``).

Per rule: the share of rows it would have committed inline, the number of commits over 20 ms it would have
let hold the loop, and their total time. A row the rule sends to the writer is not replayed (its own
duration on the writer would differ); the figures say what each rule decides on one disk's real durations.
Usage: python benchmarks/harness/inline_policy_replay.py [--rows 20000] [--gap 0.4] [--dir /tmp]
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE)]
from audit_commit_ab import _entry  # noqa: E402

from sentinel_mcp.storage import inline_policy  # noqa: E402
from sentinel_mcp.storage.inline_policy import InlinePolicy  # noqa: E402

OLD_SLOW_S, OLD_OFF_S = 0.02, 30.0


async def trace(where: Path, rows: int, gap: float) -> list[tuple[float, float]]:
    """(duration, end) in seconds of each row's commit, every one on this thread."""
    from sentinel_mcp.gateway.audit import AuditLog

    log = await AuditLog(where / "sentinel.db").open()
    db = log.db
    assert db is not None
    out: list[tuple[float, float]] = []
    real = db._commit_group

    def timed(group):  # noqa: ANN001, ANN202 - the store's own hook, timed
        t0 = time.monotonic()
        try:
            real(group)
        finally:
            t1 = time.monotonic()
            out.append((t1 - t0, t1))

    db._commit_group = timed  # type: ignore[method-assign]
    try:
        for i in range(rows):
            await log.write(_entry(i // 2, "decision" if i % 2 == 0 else "outcome"), alone=True)
            if gap:
                time.sleep(gap)
    finally:
        await log.close()
    return out


def replay_old(commits: list[tuple[float, float]]) -> tuple[int, list[float]]:
    off_until, inline, held = 0.0, 0, []
    for took, end in commits:
        if end - took < off_until:
            continue
        inline += 1
        if took > OLD_SLOW_S:
            held.append(took)
            off_until = end + OLD_OFF_S
    return inline, held


def replay_new(commits: list[tuple[float, float]]) -> tuple[int, list[float], int]:
    policy, inline, held = InlinePolicy(), 0, []
    for took, end in commits:
        if not policy.allows(end - took):
            continue
        inline += 1
        if took > inline_policy.SLOW_S:
            held.append(took)
        policy.record(took, end)
    return inline, held, policy.trips


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--gap", type=float, default=0.4, help="ms between rows")
    ap.add_argument("--dir", default=tempfile.gettempdir())
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    where = Path(tempfile.mkdtemp(prefix="inline-replay-", dir=args.dir))
    try:
        commits = asyncio.run(trace(where, args.rows, args.gap / 1000))
    finally:
        shutil.rmtree(where, ignore_errors=True)
    took = [t for t, _ in commits]
    q = statistics.quantiles(took, n=1000, method="inclusive")
    span = commits[-1][1] - commits[0][1] + commits[0][0]
    print(f"{len(took)} rows in {span:.1f} s, {args.gap} ms apart, in {args.dir}; load {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}")
    print(f"commit ms: p50 {q[499] * 1000:.3f}  p90 {q[899] * 1000:.3f}  p99 {q[989] * 1000:.2f}  "
          f"p99.9 {q[998] * 1000:.1f}  max {max(took) * 1000:.1f}; over 20 ms: "
          f"{sum(t > 0.02 for t in took)}, over 100 ms: {sum(t > 0.1 for t in took)}")
    old_inline, old_held = replay_old(commits)
    new_inline, new_held, trips = replay_new(commits)
    print(f"{'rule':34} {'inline':>14} {'slow on loop':>13} {'their ms':>9}")
    for name, inline, held in (("one over 20 ms -> 30 s off (main)", old_inline, old_held),
                               (f"InlinePolicy ({trips} trips)", new_inline, new_held)):
        print(f"{name:34} {inline:7} {inline / len(took):6.1%} {len(held):13} {sum(held) * 1000:9.1f}")


if __name__ == "__main__":
    main()
