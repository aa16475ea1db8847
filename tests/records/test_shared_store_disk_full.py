"""A store several processes share (rollback journal, ``SHARED``) whose file may not grow any more (a full
disk; here ``RLIMIT_FSIZE``, which fails a write past it with EFBIG as a full disk fails with ENOSPC): every
write answered as done is on disk, every write refused is not, and the file stays whole. The writer runs in
a child process (the limit is the process's)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

WRITES = 300  # rows tried at most, bounded by count; the limit is met long before

CHILD = r"""
import asyncio, os, resource, signal, sys
from sentinel_mcp.storage import Schema, StorageError, open_database
from sentinel_mcp.storage.sqlite import SHARED, EXCLUSIVE

path, mode, writes = sys.argv[1], sys.argv[2], int(sys.argv[3])
SCHEMA = Schema("t", {"sqlite": ["CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT NOT NULL)"]})

async def main():
    db = open_database(path, "t", SHARED if mode == "shared" else EXCLUSIVE)
    await db.migrate(SCHEMA)
    await db.write("INSERT INTO t (id, x) VALUES (?, ?)", (0, "first"))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
    limit = os.path.getsize(path) + 48 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    refused = 0
    for i in range(1, writes):
        try:
            await db.write("INSERT INTO t (id, x) VALUES (?, ?)", (i, "y" * 3000))
            print("done", i, flush=True)
        except StorageError as e:
            print("refused", i, str(e).replace("\n", " "), flush=True)
            refused += 1
            if refused >= 3:
                break
    print("healthy", db.health.ok, flush=True)
    os._exit(0)  # as a process the disk stopped: no clean close that could fold anything in

asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["shared", "exclusive"])
def test_a_store_that_cannot_grow_answers_no_write_that_is_not_on_disk(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "a.db"
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), mode, str(WRITES)], capture_output=True,
                         text=True, timeout=120)
    lines = out.stdout.splitlines()
    done = {int(line.split()[1]) for line in lines if line.startswith("done ")}
    refused = [line for line in lines if line.startswith("refused ")]
    assert done and refused, (out.stdout[-2000:], out.stderr[-2000:])
    assert all(str(path) in line and ("full" in line or "grow" in line) for line in refused), refused
    assert "healthy False" in lines, lines[-3:]
    conn = sqlite3.connect(path)  # a hot journal left behind is rolled back here, as any reader would
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        on_disk = {r[0] for r in conn.execute("SELECT id FROM t")}
    finally:
        conn.close()
    assert done <= on_disk, sorted(done - on_disk)
    refused_ids = {int(line.split()[1]) for line in refused}
    assert not refused_ids & on_disk, sorted(refused_ids & on_disk)
