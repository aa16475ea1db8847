"""What the console's Activity page costs as the audit log grows: verifying the hash chain (cold, and when
nothing was written since: cached), reading the newest rows with their latency split and chain status, and
the per-call cost of measuring the latency split itself.

Side by side in one run, each row with its goal. Usage: python benchmarks/console_activity.py [--rows N ...]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sentinel_mcp.console import audit_view, chain_view  # noqa: E402
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog  # noqa: E402
from sentinel_mcp.gateway.call_timings import CallTimings  # noqa: E402

SPLIT = {"guard": 1.2, "fetch": 0.4, "ask": 0.0, "forward": 3.3}


async def build_log(path: Path, rows: int) -> AuditLog:
    log = await AuditLog(path).open()
    batch = 200
    for start in range(0, rows, batch):
        await asyncio.gather(*(log.write(AuditEntry(
            session="alice/c1", principal="alice", tool=f"bk__tool_{i % 7}", decision="allow", outcome="ok",
            arguments={"booking_id": f"BK-{i}"}, reason="guard proved", proof={"tree": {"fact": "x(1)"}},
            timings=SPLIT, decision_id=f"d{i}")) for i in range(start, min(rows, start + batch))))
    return log


async def measure(rows: int) -> list[tuple[str, float, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "audit.db"
        log = await build_log(path, rows)
        chain_view._CACHE.clear()
        chain_view._CLOSED.clear()
        t = time.perf_counter()
        found = await chain_view.statuses(path)
        cold = (time.perf_counter() - t) * 1000
        assert all(s.problem is None for s in found.values()), found
        t = time.perf_counter()
        await chain_view.statuses(path)
        warm = (time.perf_counter() - t) * 1000
        for i in range(10):  # ten new calls since the last view: only they are checked
            await log.write(
                AuditEntry(
                    session="alice/c1",
                    principal="alice",
                    tool="bk__new",
                    decision="allow",
                    outcome="ok",
                    timings=SPLIT,
                    decision_id=f"n{i}",
                )
            )
        t = time.perf_counter()
        found = await chain_view.statuses(path)
        incremental = (time.perf_counter() - t) * 1000
        assert all(s.problem is None for s in found.values()), found
        viewer = SimpleNamespace(is_owner=False, name="alice")
        t = time.perf_counter()
        shown = await audit_view.rows(path, viewer, audit_view.Filters())
        page = (time.perf_counter() - t) * 1000
        assert shown and shown[0]["chain_status"] == "verified" and shown[0]["timings"] == SPLIT
        await log.close()
    return [
        (f"verify chain, cold ({rows} rows)", cold, "< 1500 ms at 10k rows (once)"),
        (f"verify chain, nothing new ({rows} rows)", warm, "< 5 ms"),
        (f"verify chain, 10 new rows ({rows} rows)", incremental, "< 20 ms"),
        (f"activity rows, cached chain ({rows} rows)", page, "< 300 ms"),
    ]


def split_cost(n: int = 100_000) -> float:
    t = time.perf_counter()
    for _ in range(n):
        timings = CallTimings()
        timings.guard_s += 0.001
        timings.fetch_spans.append((0.0, 0.0005))
        timings.as_dict()
    return (time.perf_counter() - t) / n * 1e6


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="*", default=[1000, 10000])
    args = parser.parse_args()
    table: list[tuple[str, str, str]] = []
    for rows in args.rows:
        table += [(what, f"{ms:.1f} ms", goal) for what, ms, goal in await measure(rows)]
    table.append(("latency split per call (measure + record dict)", f"{split_cost():.2f} µs", "< 10 µs"))
    width = max(len(r[0]) for r in table)
    print(f"{'measure'.ljust(width)}  {'result':>12}  goal")
    for what, value, goal in table:
        print(f"{what.ljust(width)}  {value:>12}  {goal}")


if __name__ == "__main__":
    asyncio.run(main())
