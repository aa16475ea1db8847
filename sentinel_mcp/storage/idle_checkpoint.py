"""The write-ahead log folded back into the file on the writer thread between commits, not inside one
(issue 21).

Why: SQLite checkpoints in the commit that takes the log past ``wal_autocheckpoint`` pages (1,000: every ~280
commits of an audit row alone). With calls alone that commit runs on the event loop's thread
(``SQLiteDatabase.write_inline``), so one call in ~140 waited for the log's sync, the pages written into the
file and the file's sync (measured: 0.2 ms of CPU on tmpfs; 0.4 ms of CPU and 0.7-10 ms on this disk under
load), then the next commit for the log's restart (its header written and synced). Now, every
``EVERY_COMMITS`` commits, a job on the writer's queue does both: the checkpoint, and the restart by a tiny
durable write of its own (``job_writer.PROBE``), while the caller goes on (forwarding the call). A commit
that comes meanwhile waits in the queue, as behind any job. SQLite's own checkpoint stays as the backstop
(a group commit's many pages can reach it first: that commit runs on the writer thread anyway).

What it does not change: every commit is synced as before; a checkpoint only copies committed pages, and
a process killed during one recovers from the log as during SQLite's own. A reader copying the file
(``copy_hold.py``) is honoured: while it holds, no checkpoint and no restart (the hold's look is taken
here as before a commit).
"""

from __future__ import annotations

import sqlite3

from sentinel_mcp.storage.copy_hold import CheckpointHold
from sentinel_mcp.storage.job_writer import PROBE

# commits between two checkpoints: 200 audit rows alone put ~700 pages in the log, under the backstop's
# 1,000 (a row carrying a proof of a few KB, 1-3 pages more)
EVERY_COMMITS = 200


class IdleCheckpoint:
    """Counts commits; says when a checkpoint is due (one queued at a time) and runs it."""

    __slots__ = ("commits", "queued", "runs")

    def __init__(self) -> None:
        self.commits = 0  # since the last checkpoint was queued
        self.queued = False
        self.runs = 0  # checkpoints run to their end (the log restarted)

    def due(self) -> bool:
        """After a commit: True when a checkpoint is to be queued now."""
        self.commits += 1
        if self.queued or self.commits < EVERY_COMMITS:
            return False
        self.queued, self.commits = True, 0
        return True

    def run(self, conn: sqlite3.Connection, hold: CheckpointHold | None, wal_size: int) -> bool:
        """On the writer thread, holding the connection: the log checkpointed and restarted, unless a reader
        copies the file. True if it was. A storage fault raises (the store degrades, as at a commit)."""
        self.queued = False
        if hold is not None:
            hold.before_commit(wal_size)
            if hold.checkpoints_off:
                return False
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        if busy:  # never with the log held exclusively; the backstop does it later then
            return False
        conn.execute(PROBE)  # its commit restarts the log (header written and synced) here, not in a call's
        self.runs += 1
        return True
