"""One durable audit row's cost inside SQLite, by layout variant, alternated in one process (issue 21). Each
variant is a real ``AuditLog`` (this tree's code) on its own file in ``--dir``, changed after it opened (an
index dropped, the head's trigger or table rebuilt, a setting); rows of a no-op call's size are written one
after another through ``AuditLog.write(alone=True)`` (the path of a call alone: committed on this thread),
in blocks alternated between the variants, so the shared machine's load falls on all alike. Per variant: the
thread's CPU a row (user + kernel: on a disk most of it is the sync's kernel work), its time inside SQLite's
``execute`` a row, wall p50, and the pages each commit put in the write-ahead log, by table or index.
Usage: python benchmarks/harness/audit_row_variants.py [--rows 3000] [--block 100] [--dir DIR]
       [--variants base,no_session_index,...]
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
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE)]

from audit_commit_ab import _entry  # noqa: E402
from audit_commit_work import wal_pages_per_commit  # noqa: E402

from sentinel_mcp.gateway.audit import AuditLog  # noqa: E402
from sentinel_mcp.gateway.audit_schema import _HEAD_TRIGGER  # noqa: E402
from sentinel_mcp.storage import inline_policy  # noqa: E402

_HEAD_REBUILT = (  # the head's table without the rowid (the chain its key), the trigger dropped around it
    "DROP TRIGGER audit_advance",
    "CREATE TABLE h2 (chain TEXT PRIMARY KEY, hash TEXT NOT NULL, rows INTEGER NOT NULL) WITHOUT ROWID",
    "INSERT INTO h2 SELECT chain, hash, rows FROM audit_head", "DROP TABLE audit_head",
    "ALTER TABLE h2 RENAME TO audit_head")
_ONE_LOOKUP = """
CREATE TRIGGER audit_advance BEFORE INSERT ON audit BEGIN
    UPDATE audit_head SET hash = NEW.hash, rows = rows + 1 WHERE chain = NEW.chain AND hash = NEW.prev_hash;
    SELECT RAISE(IGNORE) WHERE changes() = 0;
END"""


def _sql(*statements: str) -> Callable[[Any], None]:
    def run(conn: Any) -> None:
        for s in statements:
            conn.execute(s)
    return run


VARIANTS: dict[str, Callable[[Any], None] | None] = {
    "base": None,
    "no_session_index": _sql("DROP INDEX audit_session"),
    "trigger_one_lookup": _sql("DROP TRIGGER audit_advance", _ONE_LOOKUP),
    "head_without_rowid": _sql(*_HEAD_REBUILT, _HEAD_TRIGGER),
    "head_one_lookup": _sql(*_HEAD_REBUILT, _ONE_LOOKUP),
    "autocheckpoint_4000": _sql("PRAGMA wal_autocheckpoint=4000"),
    "cache_2000": _sql("PRAGMA cache_size=-2000"),
}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--block", type=int, default=100)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--variants", default="base,no_session_index,trigger_one_lookup,head_one_lookup")
    args = ap.parse_args()
    inline_policy.SLOW_S = inline_policy.STALL_S = float("inf")  # every variant stays on this thread
    names = args.variants.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="audit-row-variants-", dir=args.dir))
    logs, spent = {}, {}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    walls: dict[str, list[float]] = {n: [] for n in names}
    inside: dict[str, float] = {n: 0.0 for n in names}
    try:
        for name in names:
            (tmp / name).mkdir()
            log = await AuditLog(tmp / name / "sentinel.db").open()
            change = VARIANTS[name]
            if change is not None:
                await log.db._submit("call", change)
            exec_ = log.db._exec

            def timed(conn: Any, st: Any, exec_: Any = exec_, name: str = name) -> Any:
                t = time.thread_time()
                try:
                    return exec_(conn, st)
                finally:
                    inside[name] += time.thread_time() - t
            log.db._exec = timed
            logs[name] = log
        counter = {n: 0 for n in names}

        async def block(name: str, n: int, keep: bool) -> None:
            log = logs[name]
            t0 = time.thread_time()
            for _ in range(n):
                i = counter[name]
                w = time.perf_counter()
                await log.write(_entry(i // 2, "decision" if i % 2 == 0 else "outcome"), alone=True)
                if keep:
                    walls[name].append((time.perf_counter() - w) * 1000)
                counter[name] += 1
            if keep:
                cpu[name].append((time.thread_time() - t0) / n * 1000)

        for name in names:  # warm up
            await block(name, 200, False)
        for name in names:
            inside[name] = 0.0
        for r in range(args.rows // args.block):
            for name in names if r % 2 == 0 else reversed(names):
                await block(name, args.block, True)
        for name, log in logs.items():
            spent[name] = log.db.inline_commits
        snaps = {}
        for name in names:
            snap = tmp / name / "snap"
            snap.mkdir()
            for suffix in ("", "-wal"):
                shutil.copyfile(tmp / name / f"sentinel.db{suffix}", snap / f"sentinel.db{suffix}")
            snaps[name] = snap / "sentinel.db"
        for log in logs.values():
            await log.close()
        print(f"one audit row committed alone (write_inline), {args.rows} rows a variant in blocks of "
              f"{args.block}, alternated; in {args.dir}; load {os.getloadavg()[0]:.1f}; ms")
        print(f"{'variant':22} {'p50':>7} {'p90':>7} {'CPU/row':>8} {'in SQLite':>9} {'inline':>7}")
        for name in names:
            w = sorted(walls[name])
            print(f"{name:22} {statistics.median(w):7.3f} {w[int(len(w) * 0.9)]:7.3f} "
                  f"{statistics.median(cpu[name]):8.4f} {inside[name] / len(w) * 1000:9.4f} {spent[name]:7}")
        for name in names:
            print(f"  {name}: {wal_pages_per_commit(snaps[name])}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
