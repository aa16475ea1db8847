"""Checkpoints held off while another process copies a store (``snapshot.readable_copy``).

Why: a gateway keeps its file locked (exclusive WAL, ``sqlite.py``), so ``audit verify`` reads a copy of the
file and then of its write-ahead log. A checkpoint during that copy writes pages into the file under it, and
the log's restart that follows overwrites the frames the copy needs: the copy is torn. Under load a gateway
restarts its log every ~0.25 s (measured), so a log of a few hundred MB could never be copied whole and
``audit verify`` said BROKEN for an intact log every time.

The reader holds a shared ``flock`` on the database file itself while it copies (SQLite locks with ``fcntl``,
which ``flock`` does not touch on Linux). The writer tries the exclusive lock before each commit: if a reader
holds it, that commit does not checkpoint (``wal_autocheckpoint=0``): the log grows meanwhile, no page of the
file moves. A reader is honoured for ``HOLD_MAX_S`` and while the log is under ``HOLD_MAX_WAL`` bytes, so a
stuck one never makes the log grow without end (the reader then sees the restart, ``wal_generation``, and
tries again).

The writer looks for readers at most every ``CHECK_EVERY_S`` (issue 21: the lock tried and let go were two
system calls a commit, each a hand-over of the interpreter to and from the busy event loop), and a reader
waits ``READER_WAIT_S`` after it took its lock, before copying. Why that is as safe: a commit at time ``c``
that did not look used what the writer decided at its last look ``L``, with ``c - L < CHECK_EVERY_S``. A
reader that took its lock at ``t0`` copies from ``t0 + READER_WAIT_S`` on; for any commit from then on,
``L > c - CHECK_EVERY_S > t0``: that look saw the reader (held until its copy ends) and turned checkpoints
off, and they stay off until a look finds no reader. Both sides measure on the system's monotonic clock. A
commit already running when the reader took its lock may still checkpoint, as before: ``wal_generation``
says the copy was torn and it is taken again (``snapshot.readable_copy``).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HOLD_MAX_S = 120.0  # how long readers may keep a writer from checkpointing
HOLD_MAX_WAL = 256 << 20  # and how large its log may grow meanwhile (a copy of GBs at full load takes ~1 s)
WAIT_S = 5.0  # how long a reader waits for a writer's commit to let go of the lock
CHECK_EVERY_S = 0.05  # how often, at most, a writer looks for readers (at a commit)
READER_WAIT_S = 2 * CHECK_EVERY_S  # how long a reader waits after taking its lock (more than the above)
_HEADER = 32  # a write-ahead log's header: its checkpoint sequence and salts change at every restart


class CheckpointHold:
    """The writer's side, for one connection on one file (used on the writer's thread only)."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        self.conn = conn
        self.every = 0  # the connection's own setting, kept while checkpoints are off
        self.held_since: float | None = None  # when a reader was first seen (None: no reader)
        self._off = False
        self._looked = -CHECK_EVERY_S - 1.0  # when the writer last looked for readers (monotonic)

    def before_commit(self, wal_size: int) -> None:
        """Checkpoints on or off for the commit about to run, as readers are there or not (``wal_size``: the
        log's size as last seen). Looks for readers at most every ``CHECK_EVERY_S`` (the module's docstring
        says why that is safe); between two looks, the last one's decision holds."""
        now = time.monotonic()
        if now - self._looked < CHECK_EVERY_S:
            return
        self._looked = now
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if self.held_since is None:
                self.held_since = now
            self._set(off=now - self.held_since < HOLD_MAX_S and wal_size < HOLD_MAX_WAL)
            return
        except OSError:  # a file system without flock: nobody can hold it, checkpoints as usual
            self._set(off=False)
            return
        fcntl.flock(self.fd, fcntl.LOCK_UN)  # nobody copies: readers wait only while this is held
        self.held_since = None
        self._set(off=False)

    @property
    def checkpoints_off(self) -> bool:
        """What the last look decided: a reader copies, no checkpoint now (``idle_checkpoint.py`` too)."""
        return self._off

    def _set(self, off: bool) -> None:
        if off == self._off:
            return
        if off:
            self.every = int(self.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        self.conn.execute(f"PRAGMA wal_autocheckpoint={0 if off else self.every}")
        self._off = off

    def close(self) -> None:
        os.close(self.fd)


@contextmanager
def copy_hold(path: Path) -> Iterator[None]:
    """Held while a copy of ``path`` and its log is taken: the writer does not checkpoint meanwhile. Waits
    ``WAIT_S`` at most for the lock (a commit holds it for a moment); without it the copy goes on, and
    ``wal_generation`` tells whether it was torn."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        yield  # not there (or not a file): the copy itself says so
        return
    try:
        deadline = time.monotonic() + WAIT_S
        held = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.001)
            except OSError:  # a file system without flock: the copy goes on, checked as above
                break
        if held:
            time.sleep(READER_WAIT_S)  # every writer's next commit has looked for us (the docstring says why)
        yield
    finally:
        os.close(fd)  # drops the lock


def wal_generation(path: Path) -> bytes:
    """The identity and header of ``path``'s write-ahead log (empty when there is none): the header changes
    whenever the log restarts. Equal before and after a copy: every page a checkpoint may have written into
    the file under the copy is still in the log copied after it, which the copy replays."""
    try:
        fd = os.open(f"{path}-wal", os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        return f"{st.st_dev}:{st.st_ino}:".encode() + os.pread(fd, _HEADER, 0)
    finally:
        os.close(fd)
