"""The schema guard's cost on a write (``storage/server_schema.py``): the same statements on two tables of one
throwaway PostgreSQL, one with the ``sentinel_schema_guard`` statement trigger and one without, interleaved
(A, B, A, B... so the machine's load falls on both alike), on one session that declared its schema.

Rows: a lone INSERT committed (autocommit, what an audit row alone costs: the WAL flush dominates), the same
with ``synchronous_commit=off`` (the trigger's own CPU is then most of what differs), and a 16-row INSERT.

Run: ``python benchmarks/schema_guard_ab.py [--rounds 2000]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from sentinel_mcp.storage.local_server import LocalServer, free_port  # noqa: E402
from sentinel_mcp.storage.schema import Schema  # noqa: E402
from sentinel_mcp.storage.search_path import pin  # noqa: E402
from sentinel_mcp.storage.server_schema import apply_schema, declare, guard_tables  # noqa: E402

TABLES = "CREATE TABLE guarded (n BIGINT, body TEXT); CREATE TABLE plain (n BIGINT, body TEXT)"
SCHEMA = Schema("ab", {"postgres": [TABLES]})


def timed(conn: psycopg.Connection, sql: str, params: tuple[object, ...]) -> float:
    t = time.perf_counter()
    conn.execute(sql, params)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2000)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-ab-"))
    server = LocalServer(root / "pg", free_port())
    try:
        server.init().start()
        with psycopg.connect(server.url, autocommit=True) as conn:
            pin(conn, server.url)
            conn.execute("CREATE TABLE IF NOT EXISTS storage_schema "
                         "(store TEXT PRIMARY KEY, version INTEGER NOT NULL)")
            apply_schema(conn, SCHEMA)
            guard_tables(conn)
            conn.execute("DROP TRIGGER sentinel_schema_guard ON plain")
            declare(conn, [SCHEMA])
            many = ", ".join(["(%s, 'x')"] * 16)
            for label, setup, sql, params in (
                ("lone INSERT, synchronous_commit=on", "SET synchronous_commit = on",
                 "INSERT INTO {t} (n, body) VALUES (%s, 'x')", (1,)),
                ("lone INSERT, synchronous_commit=off", "SET synchronous_commit = off",
                 "INSERT INTO {t} (n, body) VALUES (%s, 'x')", (1,)),
                ("16-row INSERT, synchronous_commit=off", "SET synchronous_commit = off",
                 "INSERT INTO {t} (n, body) VALUES " + many, tuple(range(16))),
            ):
                conn.execute(setup)
                a: list[float] = []
                b: list[float] = []
                for _ in range(args.rounds):
                    a.append(timed(conn, sql.format(t="guarded"), params))
                    b.append(timed(conn, sql.format(t="plain"), params))
                ga, gb = statistics.median(a) * 1e6, statistics.median(b) * 1e6
                print(f"{label:40s} guarded {ga:8.1f} us  plain {gb:8.1f} us  difference {ga - gb:+7.1f} us "
                      f"(medians of {args.rounds})")
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
