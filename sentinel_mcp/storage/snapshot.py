"""Read a database that a running gateway holds exclusively (``sentinel-mcp audit``, ``facts``).

A gateway keeps its files in exclusive locking mode (no mmapped ``-shm``; see ``sqlite.py``), so another
process cannot open them while it runs. A reader then copies the file and its WAL and reads the copy: WAL
frames carry checksums, so a copy taken mid-write only lacks the last, incomplete commit. The copy is
checked and taken again if it is not consistent.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sentinel_mcp.storage.copy_hold import copy_hold, wal_generation
from sentinel_mcp.storage.row_bytes import bound_sqlite

_HEADER = b"SQLite format 3\x00"


def check_store_file(path: Path) -> None:
    """Refuse, naming the file, what cannot be an SQLite store: a FIFO, directory or device in its place
    (opening a FIFO to read would wait forever), or a file whose header is not SQLite's (garbage, zeros).
    A missing or empty file passes: the reader reports it as having no rows yet."""
    from sentinel_mcp.storage import StorageError

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError as e:
        if e.errno in (errno.ENXIO, errno.EISDIR, errno.ELOOP):
            raise StorageError(f"store {path} is not a regular file: refused") from None
        raise StorageError(f"store {path}: {e.strerror or e}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StorageError(f"store {path} is not a regular file: refused")
        head = os.read(fd, len(_HEADER))
    finally:
        os.close(fd)
    if head and head != _HEADER:
        raise StorageError(f"store {path} is not an SQLite database (damaged or replaced): refused")
    for suffix in SIDE_FILES:
        _check_side_file(path, suffix)


SIDE_FILES = ("-wal", "-journal", "-shm")  # what SQLite opens beside a store, following a symbolic link
_LOGS = ("-wal", "-journal")  # what an ended writer can leave that opening the file would fold into it


def _check_side_file(path: Path, suffix: str) -> None:
    """A side file that is there must be a regular file: SQLite (and a copy) would follow a symbolic link to
    ``/dev/zero`` and read without end, and take a FIFO for an empty log and remove it on close."""
    from sentinel_mcp.storage import StorageError

    side = path.with_name(path.name + suffix)
    try:
        st = os.lstat(side)
    except FileNotFoundError:
        return
    except OSError as e:
        raise StorageError(f"store {path}: its {suffix} file: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise StorageError(f"store {path}: its {suffix} file {side} is not a regular file: refused")


def _copy(src: Path, dst: Path) -> bool:
    """``src`` copied to ``dst`` through one descriptor (no link followed, never a FIFO or device), at most
    the size the file had when opened: a file swapped or growing meanwhile never makes the copy unbounded.
    False when ``src`` is not there."""
    from sentinel_mcp.storage import StorageError

    try:
        fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return False
    except OSError as e:
        if e.errno in (errno.ENXIO, errno.EISDIR, errno.ELOOP):
            raise StorageError(f"store file {src} is not a regular file: refused") from None
        raise StorageError(f"store file {src}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StorageError(f"store file {src} is not a regular file: refused")
        out = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            left = st.st_size
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
                left -= len(chunk)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return True


def _held_by_another(path: Path) -> bool:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.2)
        try:
            conn.execute("PRAGMA mmap_size=0")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.OperationalError as e:
        return "locked" in str(e) or "busy" in str(e)
    except sqlite3.DatabaseError as e:  # damaged past its header (its first page)
        from sentinel_mcp.storage import StorageError

        raise StorageError(f"store {path} cannot be read: {e}") from e
    return False


@contextmanager
def readable_copy(path: Path, attempts: int = 3) -> Iterator[Path]:
    """``path`` itself when nobody else holds it and it has no log left, else a consistent copy of it (deleted
    afterwards). A write-ahead log or hot rollback journal an ended process left would be folded into the file
    by opening it (and then deleted): a reader, ``audit verify`` first, must not change what it reads, nor
    need to write where it reads (a read-only copy of a data directory)."""
    from sentinel_mcp.storage.open import find_open

    check_store_file(path)
    own = find_open(path) is not None  # this process's stores share its Database
    logs = [path.with_name(path.name + suffix) for suffix in _LOGS]
    if own or (not any(log.exists() for log in logs) and not _held_by_another(path)):
        yield path
        return
    last: Exception | None = None
    for _ in range(attempts):
        with tempfile.TemporaryDirectory(prefix="sentinel-read-") as tmp:
            copy = Path(tmp) / path.name
            with copy_hold(path):  # a running writer does not checkpoint meanwhile (``copy_hold.py``)
                before = wal_generation(path)
                _copy(path, copy)
                for log, suffix in zip(logs, _LOGS):  # the copy is rolled back or replayed, never the file
                    _copy(log, copy.with_name(copy.name + suffix))
                torn = wal_generation(path) != before
            if torn:  # the log restarted under the copy: the file's pages may be of two moments
                last = sqlite3.OperationalError("its write-ahead log restarted while it was copied")
                continue
            try:
                conn = sqlite3.connect(copy, timeout=1)
                try:
                    ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
                finally:
                    conn.close()
            except sqlite3.DatabaseError as e:
                ok, last = False, e
            if ok:
                yield copy
                return
    raise sqlite3.OperationalError(f"could not read a consistent copy of {path}: {last or 'inconsistent'}")


@contextmanager
def read_connection(path: Path) -> Iterator[sqlite3.Connection]:
    with readable_copy(path) as readable:
        from sentinel_mcp.storage import StorageError

        conn = bound_sqlite(sqlite3.connect(readable, timeout=5))  # rows within ``row_bytes.py``'s bound
        try:
            conn.execute("PRAGMA mmap_size=0")
            yield conn
        except sqlite3.DatabaseError as e:  # damaged past its header: the file named, no traceback
            raise StorageError(f"store {path} cannot be read: {e}") from e
        finally:
            conn.close()
