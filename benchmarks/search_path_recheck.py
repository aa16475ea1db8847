"""What checking the store's search path again on every new PostgreSQL connection costs (``storage/
search_path.py``), side by side in one run: a new connection with the pinned path set only (the check once
per process, before) and with the check re-run (now), alternated, on a throwaway local server.

Goal: at most 50 ms added per new connection. The store keeps its connections (a writer, a reading pool, the
turn connection, reused): one is opened at start, when a pool grows and on a reconnect, never per call; so
the figure that matters is the time added to each such opening. Prints medians, the share, and the load.

    PYTHONPATH=. .venv/bin/python benchmarks/search_path_recheck.py [rounds]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg

from sentinel_mcp.storage import search_path
from sentinel_mcp.storage.local_server import LocalServer, free_port

GOAL_MS = 50.0


def main(rounds: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-bench-"))
    server = LocalServer(root / "pg", free_port())
    try:
        server.init().start()
        url = server.url
        with psycopg.connect(url, autocommit=True) as conn:
            search_path.pin(conn, url)  # the first connection: path found and checked
        path, schemas = search_path._FOUND[url]
        times: dict[str, list[float]] = {"set only (before)": [], "checked (now)": []}
        for i in range(rounds):
            for name in (list(times) if i % 2 == 0 else list(times)[::-1]):
                start = time.perf_counter()
                with psycopg.connect(url, autocommit=True) as conn:
                    if name.startswith("checked"):
                        search_path.pin(conn, url)
                    else:
                        conn.execute(search_path._SET, (path,))
                times[name].append(time.perf_counter() - start)
        before, now = (statistics.median(v) for v in times.values())
        print(f"rounds {rounds}; schemas {schemas}; load average {os.getloadavg()}")
        for name, values in times.items():
            print(f"  {name:20s} median {statistics.median(values) * 1e3:7.2f} ms per new connection")
        added = (now - before) * 1e3
        print(f"  re-check adds {added:.2f} ms ({(now - before) / before:+.0%}) to a new connection "
              f"(goal: at most {GOAL_MS:g} ms)")
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
