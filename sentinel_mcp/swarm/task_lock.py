"""One build at a time: the kernel's lock (``flock``) on ``swarm.lock``, the file naming its holder and task.

Whoever holds the kernel's lock holds the slot, whatever the file says: the kernel drops it when its process
dies (kill -9 included), so a dead owner's slot is free at once, and a process that has the lock but has not
yet written its pid (the file empty for a moment) is still its owner. The file only tells who holds it.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from sentinel_mcp.core.errors import SwarmError


class BuildBusyError(SwarmError, RuntimeError):
    """Another build holds the lock (``task_id``: the holder's build, when known)."""

    def __init__(self, message: str, task_id: str | None = None) -> None:
        super().__init__(message)
        self.task_id = task_id


class BuildQuotaError(SwarmError, RuntimeError):
    """The caller has started as many builds as one caller may within the hour."""


def _start_ticks(pid: int) -> int | None:
    """The process's start time (Linux /proc): with the pid, names the holder unambiguously in the file."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


class TaskLock:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def holder(self) -> dict | None:
        """What the file says of its holder (None: no file, or not written yet)."""
        try:
            info = json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        return info if isinstance(info, dict) else None

    def acquire(self, task_id: str) -> None:
        """Take the slot or raise ``BuildBusyError``; never waits."""
        if self._fd is not None:
            raise self._busy()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise self._busy() from None
            except BaseException:
                os.close(fd)
                raise
            # a holder releasing removes the file: the one opened may be gone by now, and a lock on it is none
            try:
                here, there = os.fstat(fd), os.stat(self.path, follow_symlinks=False)
                same = (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            self._fd = fd
            info = {"pid": os.getpid(), "task_id": task_id, "started": _start_ticks(os.getpid())}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
            return
        raise BuildBusyError("could not take the build lock")

    def _busy(self) -> BuildBusyError:
        info = self.holder() or {}
        return BuildBusyError(
            f"a build is already running (task {info.get('task_id')}, pid {info.get('pid')}); "
            "one build at a time",
            str(info.get("task_id") or ""),
        )

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            self.path.unlink(missing_ok=True)  # removed while still held: nobody takes a file on its way out
        finally:
            os.close(fd)  # drops the kernel's lock
