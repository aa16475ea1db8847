"""Directories and files only this user can read: the stores hold every principal's answers, consents and
calls, so another local account must not read them (owner-only modes, whatever the umask says).

New directories are made 0700 (each missing component); a store file is created 0600 before SQLite opens it
(SQLite gives its journal and write-ahead files the database file's mode), and an existing one of ours that
others may read is tightened. An existing directory keeps its mode: the user may have chosen it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


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


def private_file(path: Path) -> None:
    """The file exists, is a regular file (not through a symlink) and is owner-only when it is ours."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return  # the store's own open reports what is wrong (read-only, a symlink, missing directory)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and st.st_mode & 0o077:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) & ~0o077)
    finally:
        os.close(fd)
