"""What the commit watch (``storage/commit_wait.py``) costs a PostgreSQL write: rows written alone (each its
own commit, as an audit row is) with the watch and without it (a no-op in its place), alternated in rounds in
one process on one throwaway server, so load drifts hit both sides alike. Prints the median wall time and
the process's CPU time per write of each side, the goal beside them, and the load average.

Run: ``python benchmarks/harness/pg_commit_watch_ab.py [--rows 300] [--rounds 6]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sentinel_mcp.storage import open_database  # noqa: E402
from sentinel_mcp.storage.commit_wait import CommitWatch  # noqa: E402
from sentinel_mcp.storage.local_server import LocalServer, free_port  # noqa: E402
from sentinel_mcp.storage.open import release  # noqa: E402

GOAL_US = 20.0  # the watch should cost a write no more than this CPU (a commit is ~1-2 ms of wall time)


@contextlib.contextmanager
def _none(self: Any, conn: Any, seconds: float) -> Iterator[None]:
    yield


async def side(db: Any, rows: int) -> tuple[float, float]:
    walls = []
    cpu0 = time.process_time()
    for i in range(rows):
        t = time.perf_counter()
        await db.write("INSERT INTO t (n) VALUES (?)", (i,))
        walls.append(time.perf_counter() - t)
    return statistics.median(walls) * 1e3, (time.process_time() - cpu0) / rows * 1e6


async def main(rows: int, rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-watch-"))
    server = LocalServer(root / "pg", free_port()).init().start()
    real = CommitWatch.bounded
    try:
        db = open_database(server.url, "watch")
        await db.write("CREATE TABLE IF NOT EXISTS t (n INTEGER)")
        out: dict[str, list[tuple[float, float]]] = {"watch": [], "none": []}
        for r in range(rounds):
            for name in (("watch", "none") if r % 2 == 0 else ("none", "watch")):
                CommitWatch.bounded = real if name == "watch" else _none  # type: ignore[method-assign]
                out[name].append(await side(db, rows))
        CommitWatch.bounded = real  # type: ignore[method-assign]
        await release(db)
    finally:
        CommitWatch.bounded = real  # type: ignore[method-assign]
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
    for name, got in out.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        print(f"{name:6s} wall median {wall:.3f} ms/write   CPU {cpu:.1f} us/write   "
              f"({rounds} rounds x {rows})")
    extra = statistics.median(c for _, c in out["watch"]) - statistics.median(c for _, c in out["none"])
    print(f"watch's CPU per write: {extra:+.1f} us (goal <= {GOAL_US:g} us); load average {os.getloadavg()}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=300)
    p.add_argument("--rounds", type=int, default=6)
    a = p.parse_args()
    asyncio.run(main(a.rows, a.rounds))
