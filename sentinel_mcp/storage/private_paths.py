"""Directories and files only this user can read: the stores hold every principal's answers, consents and
calls, so another local account must not read them (owner-only modes, whatever the umask says).

New directories are made 0700 (each missing component); a store file is created 0600 before SQLite opens it
(SQLite gives its journal and write-ahead files the database file's mode), and an existing one of ours that
others may read is tightened. An existing directory keeps its mode: the user may have chosen it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from sentinel_mcp.core.trusted_path import replaceable_by_others
from sentinel_mcp.storage.database import StorageError


def private_dir(path: Path) -> None:
    """``path`` and its missing parents, each new one owner-only."""
    missing = []
    p = Path(path)
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            pass  # made meanwhile by another process: its mode is its maker's


class ForeignPath(StorageError):
    """A store's directory or file that another user could have put there or could change: refused."""


SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite opens these next to a database, following links


def private_file(path: Path) -> None:
    """The file exists, is a regular file of this user (not a symlink, nor one of SQLite's side files as a
    symlink or another's file: SQLite would follow or use them) and is owner-only. Raises ``ForeignPath``;
    other errors (read-only, missing directory) are left to the store's own open to report."""
    check_private_dir(Path(path).parent)
    for suffix in SQLITE_SIDE_FILES:
        side = Path(f"{path}{suffix}")
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            continue
        _own_regular(side, st)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ForeignPath(f"{path} is a symbolic link; a store is a regular file") from None
        return
    try:
        st = os.fstat(fd)
        _own_regular(Path(path), st)
        if st.st_mode & 0o077:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~0o077)
    finally:
        os.close(fd)


def check_private_dir(path: Path) -> None:
    """A store's directory: this user's, no one else may write in it (they could replace the files), nor in
    a folder above it that is not sticky."""
    try:
        st = os.stat(path)
    except OSError:
        return  # missing or unreadable: the store's own open says so
    if st.st_uid != os.geteuid():
        raise ForeignPath(f"{path} belongs to another user (uid {st.st_uid}); a store's directory is yours")
    # group write counts only for another group than this user's own (a private group, umask 002, is fine)
    if st.st_mode & 0o002 or (st.st_mode & 0o020 and st.st_gid != os.getegid()):
        raise ForeignPath(
            f"{path} may be written by group or others (mode {stat.S_IMODE(st.st_mode):04o}): they could "
            "replace the stores in it; make it 0700 (chmod 700)"
        )
    # every folder above it too (and an ACL on it): whoever may write one can move the store's folder away
    # and put their own, or a link, in its place (``core/trusted_path.py``)
    why = replaceable_by_others(path)
    if why is not None:
        raise ForeignPath(f"a store's directory {path} could be replaced: {why}")


def _own_regular(path: Path, st: os.stat_result) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise ForeignPath(f"{path} is a symbolic link; a store is a regular file in its directory")
    if not stat.S_ISREG(st.st_mode):
        raise ForeignPath(f"{path} is not a regular file")
    if st.st_uid != os.geteuid():
        raise ForeignPath(f"{path} belongs to another user (uid {st.st_uid}); a store must be yours")
