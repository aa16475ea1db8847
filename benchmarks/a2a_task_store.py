"""A2A task store operations, SQLite journal vs the shared PostgreSQL store, interleaved in one run.

Rows (per operation: wall ms and this process's CPU ms, median of rounds, each with its goal):
* commit: a task's durable write (on PostgreSQL with its lease, ``INSERT … ON CONFLICT … WHERE holder``);
* read: GetTask of a task another replica holds (PostgreSQL only: 1 read; SQLite serves it from memory);
* list: ListTasks of one principal with 200 tasks (1 read);
* renew, sweep: a replica's lease upkeep (1 statement each, whatever the number of tasks).

Run: ``python benchmarks/a2a_task_store.py [--ops 200]`` (starts its own throwaway PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sentinel_mcp.a2a.protocol import Task, TaskStatus, now_iso  # noqa: E402
from sentinel_mcp.a2a.task_journal import TaskJournal  # noqa: E402
from sentinel_mcp.a2a.task_store import TaskRecord  # noqa: E402
from sentinel_mcp.storage.local_server import LocalServer, free_port  # noqa: E402


def record(owner: str) -> TaskRecord:
    task = Task(id=str(uuid.uuid4()), context_id="c", status=TaskStatus(state="TASK_STATE_WORKING",
                                                                          timestamp=now_iso()))
    return TaskRecord(task=task, owner=owner, session_id=owner + "/s")


async def timed(fn, n: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(n):
        w, c = time.perf_counter(), time.process_time()
        await fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=200)
    n = ap.parse_args().ops
    tmp = Path(tempfile.mkdtemp(prefix="a2a-bench-"))
    server = LocalServer(tmp / "pg", free_port()).init().start()
    try:
        import psycopg

        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute('CREATE DATABASE "bench"')
        url = server.url.rsplit("/", 1)[0] + "/bench"
        lite = TaskJournal(tmp / "tasks.db")
        pa, pb = TaskJournal(url, "replica-a"), TaskJournal(url, "replica-b")
        for j in (lite, pa, pb):
            await j.open()
        held = [record("alice") for _ in range(200)]
        for r in held:
            await lite.commit(r)
            await pa.commit(r)
        table: list[tuple[str, str, str, str]] = []
        for _round in range(2):  # interleaved: both backends see the same machine load
            s_commit = await timed(lambda: lite.commit(record("bob")), n)
            p_commit = await timed(lambda: pa.commit(record("bob")), n)
            p_read = await timed(lambda: pb.read(held[7].task.id, "alice"), n)
            p_list = await timed(lambda: pb.owned("alice", 1000), max(10, n // 10))
            ids = [r.task.id for r in held]
            p_renew = await timed(lambda: pa.renew(ids), max(10, n // 10))
            p_sweep = await timed(pa.end_lapsed, max(10, n // 10))
        table += [
            (
                "commit (durable)",
                f"{s_commit[0]:.2f} / {s_commit[1]:.2f}",
                f"{p_commit[0]:.2f} / {p_commit[1]:.2f}",
                "1 round trip; < 5 ms",
            ),
            ("GetTask, other replica's", "(memory)", f"{p_read[0]:.2f} / {p_read[1]:.2f}", "1 read; < 2 ms"),
            ("ListTasks, 200 tasks", "(memory)", f"{p_list[0]:.2f} / {p_list[1]:.2f}", "1 read; < 20 ms"),
            (
                f"lease renew ({len(held)} running)",
                "-",
                f"{p_renew[0]:.2f} / {p_renew[1]:.2f}",
                "1 statement per replica per 10 s",
            ),
            (
                "sweep (none lapsed)",
                "-",
                f"{p_sweep[0]:.2f} / {p_sweep[1]:.2f}",
                "1 statement per replica per 10 s",
            ),
        ]
        for j in (lite, pa, pb):
            await j.close()
        print(f"\n{'operation':28} {'SQLite wall/CPU ms':>20} {'PostgreSQL wall/CPU ms':>24}  goal")
        for name, s, p, goal in table:
            print(f"{name:28} {s:>20} {p:>24}  {goal}")
        print(f"\n(median of {n} ops per row, second of 2 interleaved rounds; CPU = this process's)")
    finally:
        server.stop("immediate")
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
