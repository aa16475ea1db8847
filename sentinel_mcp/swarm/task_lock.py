"""One build at a time: a lock file holding the owner's pid and task id; a dead owner's lock is reclaimed."""

from __future__ import annotations

import json
import os
from pathlib import Path


class BuildBusyError(RuntimeError):
    """Another build holds the lock."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
                pid = int(info.get("pid", 0)) if isinstance(info, dict) else 0
                if pid and _alive(pid):
                    raise BuildBusyError(f"a build is already running (task {info.get('task_id')}, pid {pid}); "
                                         "one build at a time") from None
                self.path.unlink(missing_ok=True)  # stale: its owner died without cleaning up
                continue
            with os.fdopen(fd, "w") as f:
                json.dump({"pid": os.getpid(), "task_id": task_id}, f)
            self.held = True
            return
        raise BuildBusyError("could not take the build lock")

    def release(self) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False
