"""What a build leaves behind, kept as long as the design says and no longer.

* The workspace of a FAILED build is removed ``retention.failed_workspace_days`` (7) after it failed;
  a COMPLETED build's files are kept. Database rows are never removed: they are the audit trail.
* Rotated logs are removed after their own retention: ``swarm.log.*`` after ``log_retention_days`` (30),
  ``swarm-debug.log.*`` after ``retention.debug_log_days`` (7), by the file's age, so a service that was
  not running for weeks still cleans up. The current log files are never removed.

The sweep runs when the service starts, every ``retention.sweep_hours`` while it runs, and on demand
(``sentinel-mcp swarm gc``). It touches only task directories (by their id pattern) and log files of
the swarm's own data directory, never through a symlink.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from sentinel_mcp.swarm.settings import SwarmSettings
from sentinel_mcp.swarm.state import SwarmStore

DAY = 86400.0
# a build id (new_task_id), ASCII only: \d would take every script's digits (Arabic-Indic, fullwidth, ...)
TASK_DIR = re.compile(r"t[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
_ROTATED = {"swarm.log": re.compile(r"^swarm\.log\.\d{4}-\d{2}-\d{2}(_\d{2}(-\d{2}){0,2})?$"),
            "swarm-debug.log": re.compile(r"^swarm-debug\.log\.\d{4}-\d{2}-\d{2}(_\d{2}(-\d{2}){0,2})?$")}


@dataclass
class SweepReport:
    workspaces: list[str] = field(default_factory=list)  # task ids whose workspace was removed
    logs: list[str] = field(default_factory=list)  # log file names removed
    skipped: list[str] = field(default_factory=list)  # what was not removed, and why
    dry_run: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "workspaces": self.workspaces,
            "logs": self.logs,
            "skipped": self.skipped,
            "dry_run": self.dry_run,
        }


async def sweep(
    root: Path,
    store: SwarmStore,
    settings: SwarmSettings,
    *,
    now: float | None = None,
    running: Collection[str] = (),
    dry_run: bool = False,
) -> SweepReport:
    now = time.time() if now is None else now
    report = SweepReport(dry_run=dry_run)
    cutoff = now - settings.retention.failed_workspace_days * DAY
    for task_id in await store.failed_before(cutoff):
        ws = root / task_id
        if task_id in running or not TASK_DIR.fullmatch(task_id):
            report.skipped.append(
                f"{task_id}: still running here" if task_id in running else f"{task_id}: odd id"
            )
            continue
        if ws.is_symlink():
            report.skipped.append(f"{task_id}: the workspace is a symlink; left alone")
            continue
        if not ws.is_dir():
            continue  # swept before
        if not dry_run:
            shutil.rmtree(ws)  # rmtree never follows a symlink inside the tree
        report.workspaces.append(task_id)
    keep = {"swarm.log": settings.log_retention_days, "swarm-debug.log": settings.retention.debug_log_days}
    logs = root / "logs"
    if logs.is_dir() and not logs.is_symlink():
        for f in sorted(logs.iterdir()):
            for base, pattern in _ROTATED.items():
                if (
                    pattern.match(f.name)
                    and f.is_file()
                    and not f.is_symlink()
                    and now - f.stat().st_mtime > keep[base] * DAY
                ):
                    if not dry_run:
                        f.unlink()
                    report.logs.append(f.name)
    return report
