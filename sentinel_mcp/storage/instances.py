"""Each running gateway's own files: ``<root>/instances/<id>/``, held for as long as the process lives.

The write-ahead audit log (and the A2A task journal) keep SQLite in exclusive locking mode (no memory-mapped
``-shm``, see ``sqlite.py``), so one file can have one writer process only. Several gateways on one data dir
(``make run`` over HTTP while a desktop client runs ``serve`` over stdio) therefore each write their own files
here, while what must be shared (facts, consents, the owner's token) stays at the root, in files several
processes may write.

An instance holds ``flock`` on its ``lock`` file; the kernel drops it when the process ends, however it ends
(``kill -9`` too). So "is that instance alive?" is answered by trying the lock, not by a pid that may have
been
reused. A new directory is prepared under a hidden name and renamed only once its lock is held: a visible
instance without a lock holder is dead, never one still being born. The files of a dead instance stay where
they
are (readable and verifiable: ``sentinel-mcp audit``); the next gateway settles them (replays their WAL into
the
database file) and removes instances that recorded nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from sentinel_mcp.storage.private_paths import private_dir
from sentinel_mcp.storage.row_bytes import bound_sqlite

log = logging.getLogger(__name__)

INSTANCES = "instances"
LOCK = "lock"  # held by the live instance
ADOPT = "adopt.lock"  # held briefly by whoever settles or takes over a dead instance's files
OWNER = "owner.json"
ADOPT_WAIT = 5.0
# held shared by every gateway from making its hidden directory until it holds its lock, exclusively by the
# sweep of abandoned ones: what tells a half-made directory's maker alive, not the wall clock
CLAIMING = ".claiming"


def instances_dir(root: Path) -> Path:
    return Path(root) / INSTANCES


def instance_dirs(root: Path) -> list[Path]:
    """Every instance directory under ``root``, oldest first (ids start with their start time)."""
    base = instances_dir(root)
    try:
        return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
    except FileNotFoundError:
        return []


@contextlib.contextmanager
def claiming(base: Path, *, exclusive: bool) -> Iterator[bool]:
    """The instances directory's claim lock: shared (waits for a sweep under way), or exclusive without
    waiting (False: a gateway is making its directory now; sweep another time)."""
    fd = os.open(base / CLAIMING, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX | fcntl.LOCK_NB) if exclusive else fcntl.LOCK_SH)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _try_lock(path: Path, *, create: bool = False) -> int | None:
    """An fd holding ``flock`` on ``path``, or None when someone else holds it."""
    try:
        fd = os.open(path, (os.O_RDWR | os.O_CREAT) if create else os.O_RDWR, 0o600)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def is_live(directory: Path) -> bool:
    """Whether a process still holds this instance (its lock)."""
    lock = directory / LOCK
    if not lock.exists():
        return False  # never held (not an instance), or its lock was removed with it
    fd = _try_lock(lock)
    if fd is None:
        return True
    os.close(fd)
    return False


@contextlib.contextmanager
def claimed_dead(directory: Path, wait: float = ADOPT_WAIT) -> Iterator[bool]:
    """True while this process may change a dead instance's files (settle, take over); False when the
    instance is alive, or someone else kept it claimed for longer than ``wait`` seconds."""
    deadline = time.monotonic() + wait
    fd = None
    while fd is None:
        if not directory.exists():  # another gateway removed it (an instance that recorded nothing)
            yield False
            return
        try:
            fd = _try_lock(directory / ADOPT, create=True)
        except OSError:
            fd = None
        if fd is None:
            if time.monotonic() >= deadline:
                yield False
                return
            time.sleep(0.05)
    try:
        yield not is_live(directory) and directory.exists()
    finally:
        os.close(fd)


@contextlib.contextmanager
def claimed_file(path: Path, wait: float = ADOPT_WAIT) -> Iterator[bool]:
    """``claimed_dead`` for the instance a file lives in; a file outside any instance (from before them) is
    guarded by its own locks only (True)."""
    directory = path.parent
    if directory.parent.name != INSTANCES:
        yield True
        return
    with claimed_dead(directory, wait) as mine:
        yield mine


def dead_instance_files(root: Path, name: str) -> list[Path]:
    """``name`` in every instance under ``root`` that has ended (oldest first)."""
    return [d / name for d in instance_dirs(root) if (d / name).exists() and not is_live(d)]


class Instance:
    """This process's own directory of exclusive files."""

    def __init__(self, id: str, directory: Path, fd: int) -> None:
        self.id = id
        self.dir = directory
        self._fd: int | None = fd

    @classmethod
    def claim(cls, root: Path, role: str = "gateway") -> "Instance":
        base = instances_dir(root)
        private_dir(base)
        # sortable by start time; pid for people reading the list; random so that pid reuse (pid 1 in every
        # container) can never name an earlier instance
        iid = f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{os.getpid()}-{secrets.token_hex(3)}"
        hidden = base / f".new-{iid}"
        with claiming(base, exclusive=False):  # made and locked while no sweep can take it for abandoned
            hidden.mkdir(mode=0o700)
            fd = _try_lock(hidden / LOCK, create=True)
        if fd is None:  # cannot happen for a fresh directory; refuse rather than share
            raise OSError(f"could not lock the new instance directory {hidden}")
        (hidden / OWNER).write_text(
            json.dumps(
                {
                    "id": iid,
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "role": role,
                    "started": time.time(),
                }
            )
        )
        directory = base / iid
        os.rename(hidden, directory)
        return cls(iid, directory, fd)

    def release(self) -> None:
        """Let go of the directory; it is removed if nothing was recorded in it."""
        if self._fd is None:
            return
        try:
            if recorded_nothing(self.dir):
                shutil.rmtree(self.dir, ignore_errors=True)
        finally:
            os.close(self._fd)
            self._fd = None


def _databases(directory: Path) -> list[Path]:
    return [
        p
        for p in directory.iterdir()
        if p.is_file()
        and p.name not in (LOCK, ADOPT, OWNER)
        and not p.name.endswith(("-wal", "-shm", "-journal"))
    ]


def recorded_nothing(directory: Path) -> bool:
    """True when no database in the directory holds a row of its own (bookkeeping tables aside) and none says
    it ever held one. A database with an unsettled WAL, one that cannot be read, one of no bytes at all (a
    file truncated to nothing reads the same as one never written) and an audit log whose head counts rows it
    no longer has (rows deleted) count as holding something: never delete what could not be checked, nor the
    evidence that something was removed."""
    try:
        if any(w.stat().st_size > 0 for w in directory.glob("*-wal")):
            return False
        databases = _databases(directory)
        if any(db.stat().st_size == 0 for db in databases):
            return False
    except OSError:
        return False
    for db in databases:
        try:  # immutable: nothing writes it now (no WAL above), so read it without locks or -shm
            conn = bound_sqlite(sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True, timeout=0.2))
            try:
                tables = [
                    r[0]
                    for r in conn.execute(
                        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                        "AND name NOT IN ('storage_schema', 'audit_head')"
                    )
                ]
                for table in tables:
                    if conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None:
                        return False
                if conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_head'"
                ).fetchone() and conn.execute("SELECT 1 FROM audit_head WHERE rows > 0 LIMIT 1").fetchone():
                    return False
            finally:
                conn.close()
        except sqlite3.Error:
            return False
    return True


def crashed_instances(root: Path) -> list[Path]:
    """Ended instances whose write-ahead log was never folded back into their files: they did not stop
    cleanly (``kill -9``, a power cut). Ask before ``settle_dead``, which folds it."""
    out = []
    for directory in instance_dirs(root):
        try:
            unsettled = any(w.stat().st_size > 0 for w in directory.glob("*-wal"))
        except OSError:
            continue
        if unsettled and not is_live(directory):
            out.append(directory)
    return out


def settle(directory: Path) -> list[str]:
    """A dead instance's databases with their WAL replayed into the file (what a restart of the same gateway
    did to its own files); removed if it recorded nothing. Call inside ``claimed_dead``. What could not be
    settled or is found damaged (``damaged``): kept as it is, for ``audit verify`` to name, and said."""
    problems = []
    unsettled = set()
    for wal in directory.glob("*-wal"):
        db = wal.with_name(wal.name[: -len("-wal")])
        if not db.exists():
            continue
        try:
            conn = sqlite3.connect(db, timeout=1)
            try:
                conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # as it was written: no -shm
                conn.execute("PRAGMA mmap_size=0")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
        except sqlite3.Error as e:  # left as it is: readers recover the WAL themselves
            log.warning("could not settle %s: %s", db, e)
            unsettled.add(db)
            problems.append(f"an ended gateway's file {db} could not be settled ({e}); sentinel-mcp audit "
                            "verify says whether its records are whole")
    if recorded_nothing(directory):
        shutil.rmtree(directory, ignore_errors=True)
        return problems
    # no WAL (or one settled): a damaged file is found only by reading it, and is said at each start
    for db in _databases_or_none(directory):
        damage = damaged(db) if db not in unsettled else None
        if damage:
            log.warning("an ended gateway's file %s %s", db, damage)
            problems.append(f"an ended gateway's file {db} {damage}; sentinel-mcp audit verify says whether "
                            "its records are whole")
    return problems


def _databases_or_none(directory: Path) -> list[Path]:
    try:
        return _databases(directory)
    except OSError:
        return []


SQLITE_MAGIC = b"SQLite format 3\x00"


def damaged(db: Path) -> str | None:
    """What is wrong with a database nothing writes any more, read in bounded time (its header, its schema,
    the first and last row of each table: never a scan), or None. A file shorter than its header counts was
    cut (a tail cut leaves the first pages readable)."""
    try:
        size = db.stat().st_size
        with open(db, "rb") as f:
            head = f.read(100)
    except OSError as e:
        return f"cannot be read ({e})"
    if size == 0:
        return "has no bytes (truncated to nothing)"
    if len(head) < 100 or not head.startswith(SQLITE_MAGIC):
        return "is not an SQLite database (its header is gone or overwritten)"
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    if head[24:28] == head[92:96] and pages * page > size:  # the header's page count is current
        return f"is cut short ({size} bytes of the {pages * page} its header counts)"
    try:
        conn = bound_sqlite(sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True, timeout=0.2))
        try:
            tables = conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
            for table, sql in tables:
                quoted = '"' + str(table).replace('"', '""') + '"'  # a name from the file: quoted whole
                conn.execute(f"SELECT * FROM {quoted} LIMIT 1").fetchall()
                if "WITHOUT ROWID" not in str(sql).upper():  # its last row: the end of its b-tree
                    conn.execute(f"SELECT * FROM {quoted} ORDER BY _rowid_ DESC LIMIT 1").fetchall()
        finally:
            conn.close()
    except sqlite3.Error as e:
        return f"cannot be read ({e})"
    return None


def settle_dead(root: Path, problems: list[str] | None = None) -> list[Path]:
    """Settle every dead instance under ``root`` (bounded: each is claimed without waiting); the ones kept.
    ``problems``: where to say what could not be settled (the gateway's health lists them)."""
    kept = []
    _sweep_unborn(instances_dir(root))
    for directory in instance_dirs(root):
        if is_live(directory):
            continue
        with claimed_dead(directory, wait=0) as mine:
            if mine:
                said = settle(directory)
                if problems is not None:
                    problems.extend(said)
        if directory.exists():
            kept.append(directory)
    return kept


def _sweep_unborn(base: Path) -> None:
    """Hidden directories of processes that died between creating and publishing their instance: with the
    claim held exclusively, an unlocked one has no maker left (``claiming``), whatever the clocks say."""
    if not base.is_dir():
        return
    with claiming(base, exclusive=True) as held:
        if not held:
            return  # a gateway is making its directory now: the next start sweeps
        hidden = [p for p in base.iterdir() if p.name.startswith(".new-") and p.is_dir()]
        for p in hidden:
            if not is_live(p):
                shutil.rmtree(p, ignore_errors=True)


def take_over_rows(
    source: Path, table: str, columns: str, keep: Callable[[list[tuple[Any, ...]]], object]
) -> int:
    """Move the rows of ``table`` out of an ended gateway's own database ``source`` (blocking): ``keep``
    makes them durable in the caller's store first, then they are deleted there and its files removed.
    The source is held exclusively throughout (``claimed_file``, then SQLite's own exclusive lock, which an
    older Sentinel still holding it keeps), so two gateways starting at once cannot both take it; a crash
    in between only leaves a copy to merge again. How many rows moved; 0 when it cannot be taken now."""
    with claimed_file(source) as mine:
        if not mine or not source.exists():
            return 0
        try:
            conn = bound_sqlite(sqlite3.connect(f"file:{source}?mode=rw", uri=True, timeout=0.2,
                                                isolation_level=None))
        except sqlite3.Error as e:
            log.warning("%s cannot be opened to take its %s rows over: %s", source, table, e)
            return 0
        try:
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")  # as its owner wrote it: no -shm
            conn.execute("PRAGMA mmap_size=0")
            conn.execute("BEGIN EXCLUSIVE")  # fails while its owner (an older Sentinel) still holds it
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is None:
                rows = []
            else:
                rows = conn.execute(f'SELECT {columns} FROM "{table}"').fetchall()
            if rows:
                keep(rows)
                conn.execute(f'DELETE FROM "{table}"')
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            log.warning("%s: its %s rows were not taken over: %s", source, table, e)
            return 0
        finally:
            conn.close()
        for suffix in ("", "-wal", "-journal", "-shm"):
            source.with_name(source.name + suffix).unlink(missing_ok=True)
        return len(rows)
