"""Reading a store an ended process left with its write-ahead log (a ``kill -9``ed gateway's audit, before any
settle) changes nothing of it: the reader works on a copy, so the log is still there and the file's bytes are
the same after. Before, the reader opened the file itself and SQLite folded the log into it and deleted
the log (``audit verify`` rewrote the evidence it checked, and could not read a read-only copy of a data
dir)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from sentinel_mcp.storage.snapshot import read_connection

WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("PRAGMA locking_mode=EXCLUSIVE")
conn.execute("CREATE TABLE audit (id INTEGER PRIMARY KEY, text TEXT)")
conn.commit()
conn.execute("PRAGMA wal_autocheckpoint=0")  # every later commit stays in the log, as a crash leaves it
for n in range(50):
    conn.execute("INSERT INTO audit(text) VALUES (?)", (f"row {n}",))
    conn.commit()
os._exit(0)  # no close, no checkpoint: the process dies with its log
"""


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_a_reader_of_an_ended_store_with_its_log_changes_neither(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    subprocess.run([sys.executable, "-c", WRITER, str(db)], check=True, timeout=30)
    wal = db.with_name("audit.db-wal")
    assert wal.exists() and wal.stat().st_size > 0
    before = (_digest(db), _digest(wal))
    with read_connection(db) as conn:
        assert conn.execute("SELECT count(*) FROM audit").fetchone()[0] == 50  # the log's rows are read
    assert wal.exists(), "the reader folded the log into the file and deleted it"
    assert (_digest(db), _digest(wal)) == before


JOURNAL_WRITER = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode=DELETE")
conn.execute("CREATE TABLE audit (id INTEGER PRIMARY KEY, text TEXT)")
conn.execute("BEGIN")
for n in range(50):
    conn.execute("INSERT INTO audit(text) VALUES (?)", (f"row {n}",))
conn.execute("COMMIT")
conn.execute("PRAGMA cache_size=1")  # pages spill to the file mid-transaction, the journal keeps the old ones
conn.execute("BEGIN")
conn.execute("UPDATE audit SET text = hex(randomblob(2000))")
os._exit(0)  # dies mid-transaction: a hot journal is left beside a file holding uncommitted pages
"""


def test_a_reader_of_an_ended_store_with_a_hot_journal_changes_neither(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    subprocess.run([sys.executable, "-c", JOURNAL_WRITER, str(db)], check=True, timeout=30)
    journal = db.with_name("audit.db-journal")
    assert journal.exists() and journal.stat().st_size > 0
    before = (_digest(db), _digest(journal))
    with read_connection(db) as conn:  # the committed rows, as the journal's rollback gives them
        rows = conn.execute("SELECT text FROM audit ORDER BY id").fetchall()
        assert [r[0] for r in rows] == [f"row {n}" for n in range(50)]
    assert journal.exists(), "the reader rolled the journal back into the file and deleted it"
    assert (_digest(db), _digest(journal)) == before
