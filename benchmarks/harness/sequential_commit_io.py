"""What ONE sequential call's durable audit commits write and sync (issue 21, added-latency goal): the
gateway serves a stdio client (the test toolbox's no-op as its stdio upstream) under ``strace -f -T -e
trace=pwrite64,pread64,fdatasync,fsync,write``; per call it prints its system calls of those kinds by file
(the ``-wal`` and the database file, named by the ``openat`` of their descriptor), their bytes, and each
kind's p50 time in the kernel; then the pages each commit put in the write-ahead log, by table or index (the
log copied at the end, its frames walked, each page named by SQLite's ``dbstat``), and the rows' sizes.
Counts first: strace slows the process, so its times are upper bounds. A ``pread64`` of the log is a
checkpoint copying it back into the file.
Usage: python benchmarks/harness/sequential_commit_io.py [--calls N] [--dir DIR]   (KEEP_TRACE=1 keeps it)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import sqlite3
import statistics
import time
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import StdioServerParameters

HARNESS = Path(__file__).resolve().parent
ROOT = HARNESS.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(HARNESS)]
from audit_commit_work import wal_pages_per_commit  # noqa: E402
from proxy_overhead import TOOLBOX, _noop_name  # noqa: E402
from mcp.client import Client  # noqa: E402

ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}
_LINE = re.compile(r"^(\d+)\s+([\d.]+)\s+(.*)$")
_DONE = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+).*<([\d.]+)>$")


def system_calls(trace: Path, since: float) -> list[tuple[str, str, int, float]]:
    """(call, the file written or synced, result, seconds in the kernel) of every call that began after
    ``since``; a call strace split between threads (``<unfinished ...>`` / ``<... resumed>``) is joined again,
    and a descriptor is named by the ``openat`` that gave it in its process (until its ``close`` there:
    threads share descriptors, child processes do not; ``clone`` says which is which)."""
    out: list[tuple[str, str, int, float]] = []
    open_calls: dict[str, tuple[float, str]] = {}
    names: dict[tuple[str, str], str] = {}
    group: dict[str, str] = {}  # thread -> its process (the first thread's id)
    for line in trace.read_text().splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        pid, ts, rest = m.group(1), float(m.group(2)), m.group(3)
        if rest.endswith("<unfinished ...>"):
            open_calls[pid] = (ts, rest[: -len("<unfinished ...>")].rstrip())
            continue
        r = re.match(r"^<\.\.\. \w+ resumed>(.*)$", rest)
        if r and pid in open_calls:
            ts, head = open_calls.pop(pid)
            rest = head + r.group(1)
        d = _DONE.match(rest)
        if not d:
            continue
        call, first, result = d.group(1), d.group(2).split(",")[0].strip(), int(d.group(3))
        proc = group.setdefault(pid, pid)
        if call in ("clone", "clone3", "vfork", "fork"):
            if result > 0:
                group[str(result)] = proc if "CLONE_THREAD" in d.group(2) else str(result)
        elif call == "openat":
            opened = re.search(r'"([^"]+)"', d.group(2))
            if opened and result >= 0:
                names[proc, str(result)] = Path(opened.group(1)).name
        elif call == "close":
            names.pop((proc, first), None)
        elif ts >= since:
            where = names.get((proc, first), f"pipe/socket fd {first}")
            out.append((call, where, result, float(d.group(4))))
    return out


def per_call(trace: Path, since: float, calls: int) -> list[str]:
    count: collections.Counter[str] = collections.Counter()
    size: collections.Counter[str] = collections.Counter()
    took: dict[str, list[float]] = collections.defaultdict(list)
    for call, where, result, seconds in system_calls(trace, since):
        key = f"{call} {where}"
        count[key] += 1
        size[key] += max(0, result) if call not in ("fdatasync", "fsync") else 0
        took[key].append(seconds * 1000)
    out = []
    for key, n in sorted(count.items(), key=lambda kv: -kv[1]):
        out.append(f"  {key:40} {n / calls:6.2f} a call, {size[key] / calls:8.0f} bytes a call, "
                   f"{statistics.median(took[key]):.3f} ms p50 in the kernel ({n} calls)")
    return out


async def calls(target: StdioServerParameters, n: int, tmp: Path, snap: Path) -> tuple[float, list[float]]:
    async with Client(target, mode="auto") as c:
        name = await _noop_name(c)
        for _ in range(20):  # warm up
            await c.call_tool(name, {})
        since = time.time()
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await c.call_tool(name, {})
            times.append((time.perf_counter() - t0) * 1000)
        for db in tmp.rglob("sentinel.db"):  # the log as the calls left it (a clean stop folds it away)
            for suffix in ("", "-wal"):
                if Path(f"{db}{suffix}").exists():
                    shutil.copyfile(f"{db}{suffix}", snap / f"{db.name}{suffix}")
        return since, times


def row_sizes(db: Path) -> str:
    """How big the rows are (SQLite's record bytes, about), per event, and the page size."""
    conn = sqlite3.connect(db)
    try:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        cols = [r[1] for r in conn.execute("PRAGMA table_info(audit)")]
        total = " + ".join(f"coalesce(length(CAST({c} AS BLOB)), 0)" for c in cols)
        sizes = conn.execute(f"SELECT event, COUNT(*), AVG({total}), MAX({total}) FROM audit GROUP BY event")
        return f"page size {page}; row bytes by event: " + ", ".join(
            f"{event} {n} rows, mean {mean:.0f}, max {top}" for event, n, mean, top in sizes)
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the data dir goes (disk or /dev/shm)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="commit-io-", dir=args.dir))
    trace, snap = tmp / "strace.txt", tmp / "snap"
    snap.mkdir()
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "builtins": []}}))
    traced = "trace=pwrite64,pread64,fdatasync,fsync,write,openat,close,clone,clone3,vfork,fork"
    cmd = ["-f", "-T", "-ttt", "-qq", "-s", "512", "-o", str(trace), "-e", traced,
           sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"]
    try:
        target = StdioServerParameters(command="strace", args=cmd, env=ENV)
        since, times = anyio.run(calls, target, args.calls, tmp / "state", snap)
        print(f"{args.calls} sequential calls under strace, client p50 {statistics.median(times):.3f} ms "
              f"(slowed by strace: no latency figure), load {os.getloadavg()[0]:.1f}, data dir in {args.dir}")
        for line in per_call(trace, since, args.calls):
            print(line)
        for db in snap.glob("*.db"):
            print(wal_pages_per_commit(db) or f"{db.name}: no commit in its log")
            print(row_sizes(db))
    finally:
        if not os.environ.get("KEEP_TRACE"):
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
