"""What the console's Activity page costs as the audit log grows: verifying the hash chain (cold, and when
nothing was written since: cached), reading the newest rows with their latency split and chain status, and
the per-call cost of measuring the latency split itself.

With ``--shared``, the same on a throwaway local PostgreSQL (the replicas' shared store: the cluster's one
audit table, two replicas' chains, verified by chain).

Side by side in one run, each row with its goal. Usage: python benchmarks/console_activity.py [--rows N ...]
[--shared]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
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
from sentinel_mcp.storage.local_server import LocalServer, free_port  # noqa: E402

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
        shown = await audit_view.rows(audit_view.AuditSource(path), viewer, audit_view.Filters())
        page = (time.perf_counter() - t) * 1000
        assert shown and shown[0]["chain_status"] == "verified" and shown[0]["timings"] == SPLIT
        await log.close()
    return [
        (f"verify chain, cold ({rows} rows)", cold, "< 1500 ms at 10k rows (once)"),
        (f"verify chain, nothing new ({rows} rows)", warm, "< 5 ms"),
        (f"verify chain, 10 new rows ({rows} rows)", incremental, "< 20 ms"),
        (f"activity rows, cached chain ({rows} rows)", page, "< 300 ms"),
    ]


def _entry(i: int, prefix: str) -> AuditEntry:
    who = "alice" if (i // 2) % 2 else "bob"  # both principals on both replicas
    return AuditEntry(session="alice/c1", principal=who, tool=f"bk__tool_{i % 7}", decision="allow",
                      outcome="ok", arguments={"booking_id": f"BK-{i}"}, reason="guard proved",
                      proof={"tree": {"fact": "x(1)"}}, timings=SPLIT, decision_id=f"{prefix}{i}")


async def measure_shared(url: str, rows: int) -> list[tuple[str, float, str]]:
    """Two replicas' chains in one PostgreSQL audit table; the page of replica A's console."""
    a = await AuditLog(url, chain="replica-a").open()  # type: ignore[arg-type]
    b = await AuditLog(url, chain="replica-b").open()  # type: ignore[arg-type]
    for start in range(0, rows, 200):
        await asyncio.gather(*(
            (a if i % 2 else b).write(_entry(i, "p")) for i in range(start, min(rows, start + 200))))
    chain_view._CACHE.clear()
    t = time.perf_counter()
    found = await chain_view.shared_statuses(a.db)
    cold = (time.perf_counter() - t) * 1000
    assert set(found) == {"replica-a", "replica-b"} and all(s.problem is None for s in found.values()), found
    t = time.perf_counter()
    await chain_view.shared_statuses(a.db)
    warm = (time.perf_counter() - t) * 1000
    for i in range(10):
        await (a if i % 2 else b).write(_entry(i, "n"))
    t = time.perf_counter()
    found = await chain_view.shared_statuses(a.db)
    incremental = (time.perf_counter() - t) * 1000
    assert all(s.problem is None for s in found.values()), found
    viewer = SimpleNamespace(is_owner=False, name="alice")
    t = time.perf_counter()
    shown = await audit_view.rows(audit_view.AuditSource(Path("unused"), a), viewer, audit_view.Filters())
    page = (time.perf_counter() - t) * 1000
    assert shown and {r["replica"] for r in shown} == {"replica-a", "replica-b"}
    assert all(r["principal"] == "alice" and r["chain_status"] == "verified" for r in shown)
    await a.close()
    await b.close()
    return [
        (f"shared: verify 2 chains, cold ({rows} rows)", cold, "< 3000 ms at 10k rows (once)"),
        (f"shared: verify, nothing new ({rows} rows)", warm, "< 10 ms"),
        (f"shared: verify, 10 new rows ({rows} rows)", incremental, "< 40 ms"),
        (f"shared: activity rows, cached chains ({rows} rows)", page, "< 500 ms"),
    ]


async def shared_table(rows_list: list[int]) -> list[tuple[str, float, str]]:
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="sentinel-bench-pg-"))
    server = LocalServer(root / "pg", free_port())
    out: list[tuple[str, float, str]] = []
    try:
        server.init().start()
        for n, rows in enumerate(rows_list):
            with psycopg.connect(server.url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "bench{n}"')
            out += await measure_shared(f"postgresql://postgres@127.0.0.1:{server.port}/bench{n}", rows)
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
    return out


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
    parser.add_argument("--shared", action="store_true", help="also on a local PostgreSQL (replicas' store)")
    args = parser.parse_args()
    table: list[tuple[str, str, str]] = []
    for rows in args.rows:
        table += [(what, f"{ms:.1f} ms", goal) for what, ms, goal in await measure(rows)]
    if args.shared:
        table += [(what, f"{ms:.1f} ms", goal) for what, ms, goal in await shared_table(args.rows)]
    table.append(("latency split per call (measure + record dict)", f"{split_cost():.2f} µs", "< 10 µs"))
    width = max(len(r[0]) for r in table)
    print(f"{'measure'.ljust(width)}  {'result':>12}  goal")
    for what, value, goal in table:
        print(f"{what.ljust(width)}  {value:>12}  {goal}")


if __name__ == "__main__":
    asyncio.run(main())
