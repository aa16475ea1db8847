"""The audit writer's work per commit under 16 HTTP clients (the capacity row's load: the in-process no-op
built-in, guard and durable audit on): system calls per commit of the thread that commits (``strace -f`` on
every thread of the gateway, grouped by thread; the one with the syncs), and pages written to the write-ahead
log per commit, by table or index (the live ``-wal`` copied after the load, its frames walked, each page
named by SQLite's ``dbstat``). Counts, which a busy machine moves less than rates; strace slows the gateway
several times over, so its rate here is no capacity figure, and rows per commit (group commit) depend on it.
Usage: python benchmarks/harness/audit_commit_work.py [--seconds 4]   (needs strace and wrk)
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent), str(HERE)]

import pipeline_capacity as pc  # noqa: E402
from load import call_body, call_headers, wrk  # noqa: E402

TOOL, ERA = "bench__noop", "2026-07-28"


def syscalls_per_commit(trace: Path, calls: float) -> list[str]:
    per: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for line in trace.read_text().splitlines():
        m = re.match(r"(\d+)\s+(\w+)\(", line)  # a call's start (a resumed one is counted where it began)
        if m:
            per[m.group(1)][m.group(2)] += 1
    out = []
    for tid, counts in per.items():
        syncs = counts["fdatasync"] + counts["fsync"]
        if syncs < 20:
            continue
        total = sum(counts.values())
        top = ", ".join(f"{k} {v / syncs:.2f}" for k, v in counts.most_common(10))
        out.append(f"thread {tid}: {syncs} commits, ~{2 * calls / syncs:.1f} rows a commit, "
                   f"{total / syncs:.2f} system calls a commit: {top}")
    return out


def wal_pages_per_commit(db: Path) -> str | None:
    data = Path(f"{db}-wal").read_bytes() if Path(f"{db}-wal").exists() else b""
    if len(data) < 32:
        return None
    page = struct.unpack(">I", data[8:12])[0]
    frames = commits = 0
    pages: collections.Counter[int] = collections.Counter()
    pending: list[int] = []
    salt = None
    off = 32
    while off + 24 + page <= len(data):
        number, size = struct.unpack(">II", data[off:off + 8])
        if number == 0:
            break
        if data[off + 8:off + 16] != salt:  # another generation of the log: its first transaction may be cut
            salt, pending = data[off + 8:off + 16], []
        pending.append(number)
        if size:  # a commit's last frame
            commits += 1
            frames += len(pending)
            pages.update(pending)
            pending = []
        off += 24 + page
    if not commits:
        return None
    conn = sqlite3.connect(db)
    try:
        names = dict((n, name) for name, n in conn.execute("SELECT name, pageno FROM dbstat"))
    finally:
        conn.close()
    by: collections.Counter[str] = collections.Counter()
    for number, n in pages.items():
        by[names.get(number, f"page {number}")] += n
    return (f"{db.name}: {commits} commits in the log, {frames / commits:.2f} pages a commit "
            f"({frames * (page + 24) / commits:.0f} bytes), by table or index: "
            + ", ".join(f"{k} {v / commits:.2f}" for k, v in by.most_common()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-audit-work-"))
    proc, url = pc.sentinel(tmp, {}, ["bench"], "capacity")
    trace, snap = tmp / "strace.txt", tmp / "snap"
    try:
        pc.check_call(url, TOOL, ERA, None, pc.TOKEN, None)
        body, headers = call_body(TOOL, ERA, None), call_headers(TOOL, ERA, None, pc.TOKEN)
        wrk(url, body, headers, connections=16, seconds=1, server_pid=proc.pid)  # warm up
        threads = sum((["-p", t] for t in os.listdir(f"/proc/{proc.pid}/task")), [])
        st = subprocess.Popen(["strace", "-qq", "-f", "-o", str(trace), *threads], stderr=subprocess.DEVNULL)
        time.sleep(1.0)  # attached to every thread
        r = wrk(url, body, headers, connections=16, seconds=args.seconds, server_pid=proc.pid)
        st.terminate()
        st.wait()
        snap.mkdir()
        for db in tmp.rglob("sentinel.db"):  # the log as the load left it (nothing writes now)
            for suffix in ("", "-wal"):
                if Path(f"{db}{suffix}").exists():
                    shutil.copyfile(f"{db}{suffix}", snap / f"{db.name}{suffix}")
    finally:
        pc.stop_process(proc)
    print(f"{r.rate:.0f} calls/s under strace (no capacity figure), {r.rate * args.seconds:.0f} calls")
    for line in syscalls_per_commit(trace, r.rate * args.seconds):
        print(line)
    for db in snap.glob("*.db"):
        print(wal_pages_per_commit(db) or f"{db.name}: no commit in its log")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
