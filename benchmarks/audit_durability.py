"""The price of a record that cannot be lost: audit cost per call, and guarded calls per second.

Side by side in one run, each row with its goal:
  1. audit cost per call with 16 concurrent callers: the batched writer Sentinel had (rows queued and
     written after the answer: not durable when the caller is answered) against the write-ahead log
     (decision row durable before forwarding, outcome row before answering) under several SQLite setups;
  2. guarded calls per second to an in-process no-op built-in with 16 concurrent clients, through the
     real gateway pipeline, with the write-ahead log as shipped (WAL, synchronous=FULL, exclusive).
Usage: python benchmarks/audit_durability.py [--calls N] [--seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

import aiosqlite

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sentinel_mcp.gateway.audit import AuditEntry, AuditLog  # noqa: E402
from sentinel_mcp.storage import open_database  # noqa: E402
from sentinel_mcp.storage.sqlite import SQLiteOptions  # noqa: E402

CLIENTS = 16
OLD_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, session TEXT, "
    "client TEXT, origin TEXT, tool TEXT, upstream TEXT, arg_digest TEXT, arguments TEXT, decision TEXT, "
    "reason TEXT, proof TEXT, policy_version TEXT, latency_ms REAL, outcome TEXT, error TEXT)"
)


class BatchedWriter:
    """The audit writer Sentinel had before this change (queue, one writer task, WAL + NORMAL, batches)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.queue: asyncio.Queue = asyncio.Queue()

    async def open(self) -> None:
        self.db = await aiosqlite.connect(self.path)
        await self.db.execute("PRAGMA journal_mode=WAL")
        await self.db.execute("PRAGMA synchronous=NORMAL")
        await self.db.execute(OLD_SCHEMA)
        await self.db.commit()
        self.task = asyncio.create_task(self.loop())

    def record(self, e: AuditEntry) -> None:
        self.queue.put_nowait(e)

    async def loop(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while not self.queue.empty() and len(batch) < 500:
                batch.append(self.queue.get_nowait())
            if None in batch:
                batch = [b for b in batch if b is not None]
                await self.write(batch)
                return
            await self.write(batch)

    async def write(self, batch: list[AuditEntry]) -> None:
        await self.db.executemany(
            "INSERT INTO audit (ts, session, client, origin, tool, upstream, arg_digest, arguments, "
            "decision, reason,"
            " proof, policy_version, latency_ms, outcome, error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    e.ts,
                    e.session,
                    e.client,
                    e.origin,
                    e.tool,
                    e.upstream,
                    e.arg_digest,
                    '{"i": 1}',
                    e.decision,
                    e.reason,
                    None,
                    e.policy_version,
                    e.latency_ms,
                    e.outcome,
                    e.error,
                )
                for e in batch
            ],
        )
        await self.db.commit()

    async def close(self) -> None:
        self.queue.put_nowait(None)
        await self.task
        await self.db.close()


def entry(i: int, event: str = "final") -> AuditEntry:
    return AuditEntry(
        session=f"s{i % 16}",
        tool="bench__noop",
        decision="allow",
        outcome="ok",
        upstream="bench",
        arg_digest="d" * 16,
        arguments={"i": i},
        reason="read-only tool",
        policy_version="bench",
        latency_ms=0.1,
        event=event,
    )


async def batched(tmp: Path, calls: int) -> float:
    w = BatchedWriter(tmp / "batched.db")
    await w.open()
    per = calls // CLIENTS

    async def client(c: int) -> None:
        for i in range(per):
            w.record(entry(c * per + i))
            await asyncio.sleep(0)  # the call goes on; the row is written later

    t0 = time.perf_counter()
    await asyncio.gather(*[client(c) for c in range(CLIENTS)])
    await w.close()  # until every row is on disk (NORMAL: not fsynced)
    return (time.perf_counter() - t0) / (per * CLIENTS)


async def write_ahead(
    tmp: Path, calls: int, options: SQLiteOptions, name: str, clients: int = CLIENTS
) -> tuple[float, float]:
    from sentinel_mcp.storage import open as storage_open

    path = tmp / f"{name}.db"
    db = open_database(path, "audit", options)  # the options this row measures; AuditLog shares it
    log = await AuditLog(path).open()
    per = calls // clients
    before = (db.commits, db.committed_jobs)

    async def client(c: int) -> None:
        for i in range(per):
            await log.write(entry(c * per + i, "decision"))  # before forwarding
            await log.write(entry(c * per + i, "outcome"))  # before answering

    t0 = time.perf_counter()
    await asyncio.gather(*[client(c) for c in range(clients)])
    elapsed = time.perf_counter() - t0
    jobs_per_commit = (db.committed_jobs - before[1]) / max(1, db.commits - before[0])
    await log.close()
    await storage_open.release(db)
    return elapsed / (per * clients), jobs_per_commit


async def gateway_rate(tmp: Path, seconds: float) -> tuple[float, int]:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    from sentinel_mcp.config import parse_config
    from sentinel_mcp.core.port import Completed
    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.gateway.upstream import BuiltinTarget

    server = MCPServer("bench")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def noop() -> str:
        return "ok"

    config = parse_config(
        {"mcpServers": {}, "sentinel": {"data_dir": str(tmp / "gw"), "builtins": []}},
        source="<bench>",
        base_dir=tmp,
    )
    async with running_gateway(config) as rt:
        up = rt.manager.add("bench", BuiltinTarget(server=server))
        await up.wait_ready(20)
        while "bench__noop" not in rt.manager.catalog.tools:
            await asyncio.sleep(0.01)
        done = 0
        stop = time.perf_counter() + seconds

        async def client(c: int) -> None:
            nonlocal done
            while time.perf_counter() < stop:
                out = await rt.gateway.invoke("bench__noop", {}, session_id=f"bench{c}")
                assert isinstance(out, Completed) and not out.result.is_error
                done += 1

        t0 = time.perf_counter()
        await asyncio.gather(*[client(c) for c in range(CLIENTS)])
        rate = done / (time.perf_counter() - t0)
        rows = (await rt.audit.db.query("SELECT COUNT(*) FROM audit"))[0][0]
    return rate, rows


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=1600)
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    tmp = Path(
        tempfile.mkdtemp(
            prefix="sentinel-bench-", dir=ROOT / ".bench" if (ROOT / ".bench").is_dir() else None
        )
    )
    try:
        rows: list[tuple[str, str, str, str]] = []
        cost = await batched(tmp, args.calls)
        rows.append(
            (
                "audit/call, batched after the answer (before)",
                f"{cost * 1e6:8.0f} us",
                "not durable when answered",
                "reference",
            )
        )
        setups = [
            (
                "WAL, NORMAL, exclusive",
                SQLiteOptions(synchronous="NORMAL"),
                "fast, not on disk before forwarding",
            ),
            ("WAL, FULL, exclusive (shipped)", SQLiteOptions(), "durable, no -shm mmap"),
            ("WAL, FULL, shared -shm", SQLiteOptions(exclusive=False), "durable, -shm mmapped (SIGBUS risk)"),
            (
                "rollback journal, FULL",
                SQLiteOptions(journal="TRUNCATE", exclusive=False),
                "durable, multi-process",
            ),
        ]
        for name, options, note in setups:
            cost, per_commit = await write_ahead(
                tmp, args.calls, options, name.split(" (")[0].replace(", ", "-")
            )
            rows.append(
                (
                    f"audit/call, write-ahead, {name}",
                    f"{cost * 1e6:8.0f} us",
                    f"{per_commit:5.1f} writes/commit; {note}",
                    "<= 670 us (1,500 calls/s)",
                )
            )
        cost, per_commit = await write_ahead(tmp, args.calls * 2, SQLiteOptions(), "wal-full-64", clients=64)
        rows.append(
            (
                "audit/call, write-ahead, shipped, 64 callers",
                f"{cost * 1e6:8.0f} us",
                f"{per_commit:5.1f} writes/commit; group commit grows with load",
                "<= 670 us (1,500 calls/s)",
            )
        )
        rate, audited = await gateway_rate(tmp, args.seconds)
        rows.append(
            (
                "guarded calls/s, 16 clients, no-op built-in",
                f"{rate:8.0f} /s",
                f"write-ahead audit ({audited} rows)",
                ">= 1,500 /s",
            )
        )
        width = max(len(r[0]) for r in rows)
        print(f"{'measure':{width}}  {'value':>11}  {'goal':>26}  note")
        for name, value, note, goal in rows:
            print(f"{name:{width}}  {value:>11}  {goal:>26}  {note}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
