"""A store's side file planted by whoever can write the data dir, then read by ``audit``, ``audit verify``
or ``facts``: the write-ahead log made a symbolic link to ``/dev/zero`` made the reader copy without end (it
filled the temporary directory's disk, 3 GB in 20 s, and never answered); a FIFO in its place was silently
taken for an empty log and removed by SQLite on close (the evidence gone). Now a side file (``-wal``,
``-journal``, ``-shm``) that is not a regular file is refused, naming it, and a copy never reads more than the
file's size.

The reader runs in a subprocess under ``RLIMIT_FSIZE``, so a reader without the fix fails the test instead of
filling the disk."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .rig import ROOT

pytestmark = pytest.mark.timeout(120)

HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode=EXCLUSIVE"); conn.execute("PRAGMA journal_mode=WAL")
conn.execute("CREATE TABLE t (x)"); conn.execute("INSERT INTO t VALUES (1)")
print("ready", flush=True)
time.sleep(120)
"""

READER = """
import sys
from sentinel_mcp.storage import StorageError
from sentinel_mcp.storage.snapshot import read_connection
try:
    with read_connection(__import__("pathlib").Path(sys.argv[1])) as conn:
        print("rows", conn.execute("SELECT count(*) FROM t").fetchone()[0])
except StorageError as e:
    print("refused:", e)
"""


def read(db: Path) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # a copy of /dev/zero stops at 64 MB with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))

    return subprocess.run([sys.executable, "-c", READER, str(db)], capture_output=True, text=True, cwd=ROOT,
                          preexec_fn=limit, timeout=60)


def plant(side: Path, what: str) -> None:
    if side.exists() or side.is_symlink():
        side.unlink()
    if what == "fifo":
        os.mkfifo(side)
    else:
        os.symlink(what, side)


@pytest.mark.parametrize("held", [True, False], ids=["held by its gateway", "ended"])
@pytest.mark.parametrize("what", ["/dev/zero", "fifo"])
def test_a_side_file_that_is_not_a_regular_file_is_refused_by_readers(tmp_path: Path, held: bool,
                                                                       what: str) -> None:
    db = tmp_path / "sentinel.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        if not held:
            holder.kill()
            holder.wait(10)
        wal = db.with_name(db.name + "-wal")
        assert wal.exists()
        plant(wal, what)
        started = time.monotonic()
        out = read(db)
        assert out.returncode == 0, out.stderr[-2000:]
        refusal = out.stdout
        assert refusal.startswith("refused:") and "-wal" in refusal and "not a regular file" in refusal, (
            out.stdout, out.stderr[-2000:], time.monotonic() - started)
        assert wal.is_symlink() or wal.exists()  # left where it was: evidence, not cleaned away
    finally:
        holder.kill()
        holder.wait(10)
