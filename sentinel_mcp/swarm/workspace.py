"""A task's workspace ``<data dir>/swarm/<task_id>/``: atomic writes, path checks again at write time."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sentinel_mcp.swarm.path_safety import UnsafePathError, check_relative_path, resolve_inside


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

    def read_file(self, rel: str) -> str:
        target = resolve_inside(self.root, rel)
        if not target.is_file():
            raise FileNotFoundError(rel)
        return target.read_text(encoding="utf-8")

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
            except (UnsafePathError, UnicodeDecodeError, OSError):
                continue
        return out
