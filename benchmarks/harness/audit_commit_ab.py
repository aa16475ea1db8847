"""One durable audit row, sequential, two source trees interleaved (issue 21: the two commits a guarded call
waits for). Each tree runs in its own process (``PYTHONPATH`` = the tree) with its own log in a fresh
directory on the disk under test, and writes rows of a real call's size one after another through
``AuditLog.write(..., alone=True)``, the path of a call alone (committed on the caller's thread while the
writer is idle: ``SQLiteDatabase.write_inline``). Blocks of rows alternate between the trees, so the shared
machine's load falls on both alike. Per tree: p50 and p90 of a row's write (wall time), the process's CPU per
row, and what each commit put in the write-ahead log (pages, bytes, by table or index).
Usage: python benchmarks/harness/audit_commit_ab.py --base /work/main [--rows 2000] [--block 100] [--dir DIR]
       [--page-size N]   (this tree's log made with another page size)
       [--policy]        (each tree's own rule for leaving the caller's thread after slow commits)
       [--gap-ms MS]     (a pause after each row: a call's forward, when the writer thread may work)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def _entry(i: int, event: str):  # noqa: ANN202 - the tree's own AuditEntry
    from sentinel_mcp.gateway.audit import AuditEntry

    # a row of the size a no-op call's rows have (~440 bytes: ``sequential_commit_io.py``)
    return AuditEntry(session=f"session-{i % 4:04d}-0123456789abcdef", client="bench-client 1.0",
                      tool="tb__noop", upstream="tb", decision="allow", outcome="ok" if event != "decision"
                      else "forwarded", arg_digest="d" * 64, arguments={}, reason="read-only tool",
                      policy_version="0123456789abcdef", latency_ms=0.42, event=event, principal="owner",
                      timings={"guard": 0.1, "forward": 0.3})


async def _child(where: Path) -> None:
    """Runs in the tree's own process: one line in (rows to write), one JSON line out (their times)."""
    from sentinel_mcp.gateway.audit import AuditLog
    from sentinel_mcp.storage import sqlite

    # slow commits turn commits on the caller's thread off for a while (a slow disk must not hold the event
    # loop; before branch perf-inline, ONE commit over 20 ms for 30 s); on a busy shared machine that would
    # move a tree to the writer thread's path for much of the run, so both trees keep the inline path here
    # (their counts are printed), unless ``--policy``: each tree's own rule, the A/B of the rule itself
    if not os.environ.get("AUDIT_AB_POLICY"):
        sqlite.INLINE_SLOW_S = float("inf")  # trees before perf-inline
        try:
            from sentinel_mcp.storage import inline_policy
        except ImportError:
            pass
        else:
            inline_policy.SLOW_S = inline_policy.STALL_S = float("inf")
    sys.path.insert(0, str(HERE))
    from audit_commit_work import wal_pages_per_commit

    path = where / "sentinel.db"
    page = int(os.environ.get("AUDIT_AB_PAGE_SIZE") or 0)
    if page:  # a file of that page size, made before the store opens it (its schema is applied after)
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA page_size={page}")
        conn.execute("VACUUM")
        conn.close()
    log = await AuditLog(path).open()
    i = 0
    for line in sys.stdin:
        n = int(line)
        if n == 0:
            break
        times, cpu0, loop0 = [], time.process_time(), time.thread_time()
        gap = float(os.environ.get("AUDIT_AB_GAP_MS") or 0) / 1000
        for _ in range(n):
            event = "decision" if i % 2 == 0 else "outcome"
            t0 = time.perf_counter()
            await log.write(_entry(i // 2, event), alone=True)
            times.append((time.perf_counter() - t0) * 1000)
            i += 1
            if gap:  # a call's forward between its two rows (not timed; the writer thread may work meanwhile)
                await asyncio.sleep(gap)
        print(json.dumps({"times": times, "cpu": (time.process_time() - cpu0) * 1000 / n,
                          "loop": (time.thread_time() - loop0) * 1000 / n}), flush=True)
    snap = where / "snap"  # the log as the rows left it (the file is held exclusively)
    snap.mkdir()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{path}{suffix}", snap / f"{path.name}{suffix}")
    wal = wal_pages_per_commit(snap / path.name)
    inline, commits = log.db.inline_commits, log.db.commits
    print(json.dumps({"wal": wal, "inline": inline, "commits": commits}), flush=True)
    await log.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="the base tree (a worktree of main)")
    ap.add_argument("--rows", type=int, default=2000, help="rows per tree (after 200 to warm up)")
    ap.add_argument("--block", type=int, default=100)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--page-size", type=int, default=0, help="this tree's log made with this page size")
    ap.add_argument("--gap-ms", type=float, default=0.0,
                    help="a pause after each row, as a call's forward between its rows (not timed)")
    ap.add_argument("--policy", action="store_true",
                    help="each tree's own rule for leaving the caller's thread (default: always inline)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.path.insert(0, os.environ["PYTHONPATH"])
        asyncio.run(_child(Path(args.child)))
        return
    trees = {"base": Path(args.base).resolve(), "this tree": ROOT}
    tmp = Path(tempfile.mkdtemp(prefix="audit-commit-ab-", dir=args.dir))
    procs = {}
    for name, tree in trees.items():
        where = tmp / name.replace(" ", "-")
        where.mkdir()
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore",
               "AUDIT_AB_PAGE_SIZE": str(args.page_size if name == "this tree" else 0),
               "AUDIT_AB_POLICY": "1" if args.policy else "", "AUDIT_AB_GAP_MS": str(args.gap_ms)}
        procs[name] = subprocess.Popen([sys.executable, __file__, "--child", str(where)], text=True, env=env,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tree)
    times: dict[str, list[float]] = {n: [] for n in trees}
    cpu: dict[str, list[float]] = {n: [] for n in trees}
    loop_cpu: dict[str, list[float]] = {n: [] for n in trees}  # the caller's thread (the event loop's) alone
    tail = {}
    try:
        def block(name: str, n: int) -> dict:
            p = procs[name]
            assert p.stdin and p.stdout
            p.stdin.write(f"{n}\n")
            p.stdin.flush()
            return json.loads(p.stdout.readline())

        for name in trees:  # warm up
            block(name, 200)
        order = list(trees)
        for r in range(args.rows // args.block):
            for name in order if r % 2 == 0 else reversed(order):
                out = block(name, args.block)
                times[name] += out["times"]
                cpu[name].append(out["cpu"])
                loop_cpu[name].append(out["loop"])
        for name, p in procs.items():
            tail[name] = block(name, 0)
            p.wait(30)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
        subprocess.run(["rm", "-rf", str(tmp)], check=False)
    print(f"one audit row committed alone (write_inline), {args.rows} rows per tree in blocks of "
          f"{args.block}, alternated; in {args.dir}; load {os.getloadavg()[0]:.1f}; ms"
          f"{'; each tree its own inline rule' if args.policy else ''}")
    # p99.5 and the slowest rows: where a checkpoint inside a row's commit shows (one row in ~280)
    print(f"{'tree':10} {'p50':>7} {'p90':>7} {'p99.5':>7} {'mean':>7} {'max':>7} {'CPU/row':>8} "
          f"{'loop CPU':>8} {'inline':>8}")
    for name in trees:
        q = statistics.quantiles(times[name], n=200)
        print(f"{name:10} {statistics.median(times[name]):7.3f} {q[179]:7.3f} {q[198]:7.3f} "
              f"{statistics.mean(times[name]):7.3f} {max(times[name]):7.3f} "
              f"{statistics.mean(cpu[name]):8.3f} "
              f"{statistics.mean(loop_cpu[name]):8.3f} "
              f"{tail[name]['inline']:5}/{tail[name]['commits']}")
    for name in trees:
        print(f"{name}: {tail[name]['wal']}")


if __name__ == "__main__":
    main()
