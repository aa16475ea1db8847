"""What an audit commit costs on PostgreSQL: the statements the server is sent (each one a round trip: the
seam does not pipeline) per row written alone and per group commit under concurrent writers, and the time of
one durable row written alone (median and p90 over N).

Statements are counted from the server's own log (``log_statement = all`` on the counting database only):
every statement a client sends is there, ``BEGIN``/``COMMIT``/``SAVEPOINT`` and prepared ones alike, and a
trigger's statements are not (they are no round trip). Timing runs on another database, without the log.

Run: ``python benchmarks/harness/pg_audit_commit.py [--rows 300] [--writers 16]`` (starts its own throwaway
PostgreSQL; as root the server runs as the ``postgres`` user).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog  # noqa: E402
from sentinel_mcp.gateway.audit_cluster import verify_server  # noqa: E402
from sentinel_mcp.storage.local_server import LocalServer, free_port  # noqa: E402

_SENT = re.compile(r"LOG:  (?:statement|execute [^:]*): (\S+)")


def entry(i: int) -> AuditEntry:
    return AuditEntry(session=f"s{i % 16}", tool="t", decision="allow", outcome="ok", arguments={"i": i})


def _database(server: LocalServer, name: str, logged: bool) -> str:
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        if logged:
            conn.execute(f'ALTER DATABASE "{name}" SET log_statement = \'all\'')
    return f"postgresql://postgres@127.0.0.1:{server.port}/{name}"


def _sent_since(log_file: Path, offset: int) -> Counter[str]:
    with open(log_file, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    return Counter(m.group(1).upper() for m in _SENT.finditer(text))


async def count(server: LocalServer, rows: int, writers: int) -> None:
    url = _database(server, "counted", logged=True)
    log_file = server.root / "log"
    log = await AuditLog(url, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        for i in range(5):  # the head read, the connection's set-up, psycopg's prepared statements
            await log.write(entry(i))
        mark = log_file.stat().st_size
        for i in range(rows):
            await log.write(entry(i))
        await asyncio.sleep(0.3)  # the server's log is written asynchronously by its collector
        alone = _sent_since(log_file, mark)
        print(f"alone: {sum(alone.values()) / rows:.2f} statements (round trips) per row, one commit each: "
              + ", ".join(f"{k} {v / rows:.2f}" for k, v in alone.most_common()))
        mark = log_file.stat().st_size
        commits = log.db.commits
        per = max(1, rows // writers)
        await asyncio.gather(*(
            asyncio.gather(*(log.write(entry(w * per + i)) for i in range(per))) for w in range(writers)))
        await asyncio.sleep(0.3)
        commits = log.db.commits - commits
        many = _sent_since(log_file, mark)
        total = per * writers
        print(f"{writers} concurrent writers, {total} rows in {commits} commits: "
              f"{sum(many.values()) / commits:.2f} statements per commit, {sum(many.values()) / total:.2f} "
              "per row: " + ", ".join(f"{k} {v / total:.2f}" for k, v in many.most_common()))
    finally:
        await log.close()
    report = await asyncio.to_thread(verify_server, url)
    print(f"verified: {report.ok} ({report.rows} rows)")


async def timing(server: LocalServer, rows: int, writers: int, flush: bool) -> None:
    name = "timed" if flush else "timed_no_flush"
    url = _database(server, name, logged=False)
    if not flush:  # the round trips' share alone: no wait for the WAL's flush (never the product's setting)
        with __import__("psycopg").connect(server.url, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    log = await AuditLog(url, chain="replica-a").open()  # type: ignore[arg-type]
    try:
        for i in range(20):
            await log.write(entry(i))
        took = []
        for i in range(rows):
            started = time.perf_counter()
            await log.write(entry(i))
            took.append((time.perf_counter() - started) * 1000)
        took.sort()
        per = max(1, rows // writers)

        async def writer(w: int) -> None:
            for i in range(per):
                await log.write(entry(w * per + i))

        started = time.perf_counter()
        await asyncio.gather(*(writer(w) for w in range(writers)))
        rate = per * writers / (time.perf_counter() - started)
    finally:
        await log.close()
    what = "durable" if flush else "synchronous_commit off"
    print(f"a row written alone ({what}), {rows} rows: median {statistics.median(took):.3f} ms, "
          f"p90 {took[int(len(took) * 0.9)]:.3f} ms; {writers} writers one row after another: "
          f"{rate:.0f} rows/s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--writers", type=int, default=16)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sentinel-pg-audit-"))
    server = LocalServer(root / "pg", free_port())
    try:
        server.init().start()
        asyncio.run(count(server, args.rows, args.writers))
        asyncio.run(timing(server, args.rows, args.writers, flush=True))
        asyncio.run(timing(server, args.rows, args.writers, flush=False))
    finally:
        server.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
