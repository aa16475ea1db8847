"""One build at a time: a lock file holding the owner's pid and task id; a dead owner's lock is reclaimed."""

from __future__ import annotations

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
    """The process's start time (Linux /proc), so a recycled pid is not taken for the lock's owner."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _alive(pid: int, started: int | None = None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if started is not None:
        now = _start_ticks(pid)
        if now is not None and now != started:
            return False  # the pid was reused by another process
    return True


def holder_alive(info: dict | None) -> bool:
    if not isinstance(info, dict) or not info.get("pid"):
        return False
    started = info.get("started")
    return _alive(int(info["pid"]), int(started) if isinstance(started, int) else None)


class TaskLock:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.held = False

    def holder(self) -> dict | None:
        try:
            return json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return None

    def acquire(self, task_id: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                info = self.holder()
                if holder_alive(info):
                    assert isinstance(info, dict)
                    raise BuildBusyError(f"a build is already running (task {info.get('task_id')}, "
                                         f"pid {info.get('pid')}); one build at a time",
                                         str(info.get("task_id") or "")) from None
                self.path.unlink(missing_ok=True)  # stale: its owner died without cleaning up
                continue
            with os.fdopen(fd, "w") as f:
                json.dump({"pid": os.getpid(), "task_id": task_id, "started": _start_ticks(os.getpid())}, f)
            self.held = True
            return
        raise BuildBusyError("could not take the build lock")

    def release(self) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False
