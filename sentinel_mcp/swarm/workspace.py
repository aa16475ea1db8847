"""A task's workspace ``<data dir>/swarm/<task_id>/``: atomic writes, path checks again at write time."""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

from sentinel_mcp.core.errors import SwarmError
from sentinel_mcp.swarm.limits import HARD_MAX_FILE_BYTES
from sentinel_mcp.swarm.path_safety import UnsafePathError, check_relative_path, resolve_inside

# files a caller is told of (swarm_status, the console's page): a build writes at most 25, anything else
# may have put any number there
MAX_LISTED_FILES = 1000


class NotBuildFileError(SwarmError):
    """A workspace path that holds something other than a file the build wrote (not served)."""


def _as_written(f: BinaryIO, written: str | None) -> BinaryIO:
    """A file with other names (``f``, closed here): a copy made with hard links (``cp -al``) shares the
    build's files, another name anywhere on the disk may hold any file's data or rewrite this one in place.
    Served only when what is read (at most what a build writes) is what the build recorded writing; the
    bytes judged are the bytes served, so a rewrite after the check changes nothing."""
    with f:
        if written is None:
            raise NotBuildFileError(
                "a file with other names (a hard link) and no digest of what its build wrote (a build from "
                "before they were recorded): not only this build's. A data directory copied with `cp -al` "
                "shares its files this way; copy it with `cp -a` instead"
            )
        data = f.read(HARD_MAX_FILE_BYTES + 1)
    if len(data) > HARD_MAX_FILE_BYTES or not hmac.compare_digest(hashlib.sha256(data).hexdigest(), written):
        raise NotBuildFileError(
            "a file with other names (a hard link) whose content is not what the build wrote"
        )
    return io.BytesIO(data)


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def create(self) -> Workspace:
        self.root.mkdir(parents=True, exist_ok=True)
        return self

    def write_file(self, rel: str, content: str) -> Path:
        """Write atomically (temp file in the same directory, fsync, rename); refuses unsafe paths."""
        target = resolve_inside(self.root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        # re-check after mkdir: a symlink could have appeared between check and creation
        target = resolve_inside(self.root, rel)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(content)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        return target

    def open_file(self, rel: str, written: str | None = None) -> BinaryIO:
        """A file the build wrote, opened for reading (binary): ``NotBuildFileError`` for anything else found
        at ``rel``, ``FileNotFoundError`` for nothing (or a directory). ``written``: the SHA-256 (hex) the
        build recorded for it, which lets a file with other names through when it holds just that."""
        target = resolve_inside(self.root, rel)
        # no link at the end (O_NOFOLLOW), no wait on a pipe (O_NONBLOCK); then judged by what was opened
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            raise
        except OSError:
            raise NotBuildFileError("not a file this build wrote") from None
        f = os.fdopen(fd, "rb")
        try:
            st = os.fstat(f.fileno())
            if stat.S_ISDIR(st.st_mode):
                raise FileNotFoundError(rel)
            if not stat.S_ISREG(st.st_mode):
                raise NotBuildFileError("not a regular file")
            # the build writes each file once, by rename: a second name means its data is also another file's
            # (a hard link needs no symlink on the way: another build's file, any file of the same disk)
            if st.st_nlink != 1:
                return _as_written(f, written)
        except BaseException:
            f.close()
            raise
        return f

    def read_file(self, rel: str, written: str | None = None) -> str:
        """A file the build wrote, as text (``open_file``'s checks): at most ``HARD_MAX_FILE_BYTES`` of UTF-8,
        the most a build writes; a larger file came from elsewhere (and is read only to that bound)."""
        with self.open_file(rel, written) as f:
            data = f.read(HARD_MAX_FILE_BYTES + 1)
        if len(data) > HARD_MAX_FILE_BYTES:
            raise NotBuildFileError(f"larger than any file a build writes ({HARD_MAX_FILE_BYTES} bytes)")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise NotBuildFileError("not UTF-8 text") from None

    def list_files(self, limit: int | None = None) -> list[str]:
        """Relative paths of the regular files, without following symlinks; temp files excluded; at most
        ``limit`` of them, the first the walk finds (None: all)."""
        if not self.root.is_dir():
            return []
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            for name in filenames:
                p = Path(dirpath) / name
                if name.endswith(".tmp") and name.startswith(".") or p.is_symlink():
                    continue
                found.append(p.relative_to(self.root).as_posix())
                if limit is not None and len(found) >= limit:
                    return sorted(found)
        return sorted(found)

    def read_all(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for rel in self.list_files():
            try:
                check_relative_path(rel)
                out[rel] = self.read_file(rel)
            except (UnsafePathError, NotBuildFileError, OSError):
                continue
        return out
