"""What a build leaves behind, kept as long as the design says and no longer.

* The workspace of a FAILED build is removed ``retention.failed_workspace_days`` (7) after it failed.
* An ended build's files (COMPLETED or FAILED) are kept, up to ``retention.max_kept_workspaces`` builds and
  ``retention.max_kept_mib`` per principal (its newest build always, then its COMPLETED ones before its FAILED
  ones): past them that principal's oldest of each kind are removed, never another principal's. Database
  rows are never removed: they are the audit trail.
* Rotated logs are removed after their own retention: ``swarm.log.*`` after ``log_retention_days`` (30),
  ``swarm-debug.log.*`` after ``retention.debug_log_days`` (7), by the file's age, so a service that was
  not running for weeks still cleans up. The current log files are never removed.

The sweep runs when the service starts, every ``retention.sweep_hours`` while it runs, and on demand
(``sentinel-mcp swarm gc``). It touches only task directories (by their id pattern) and log files of
the swarm's own data directory, never through a symlink. A principal's kept builds are also trimmed when one
of its builds ends (``trim_kept``): 30 builds an hour come between two sweeps.
"""

from __future__ import annotations

import asyncio
import os
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
TASK_ID_PATTERN = r"t[0-9]{8}-[0-9]{6}-[0-9a-f]{6}"
TASK_ID_LENGTH = 23  # every id the pattern takes is this long (a tool's schema bounds task_id by it)
TASK_DIR = re.compile(TASK_ID_PATTERN)
_ROTATED = {"swarm.log": re.compile(r"^swarm\.log\.\d{4}-\d{2}-\d{2}(_\d{2}(-\d{2}){0,2})?$"),
            "swarm-debug.log": re.compile(r"^swarm-debug\.log\.\d{4}-\d{2}-\d{2}(_\d{2}(-\d{2}){0,2})?$")}


@dataclass
class SweepReport:
    workspaces: list[str] = field(default_factory=list)  # FAILED builds whose workspace was removed
    trimmed: list[str] = field(default_factory=list)  # COMPLETED builds removed past their principal's caps
    logs: list[str] = field(default_factory=list)  # log file names removed
    skipped: list[str] = field(default_factory=list)  # what was not removed, and why
    unsigned_ends: list[str] = field(default_factory=list)  # kept: ended without a signed end (server store)
    dry_run: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "workspaces": self.workspaces,
            "trimmed": self.trimmed,
            "logs": self.logs,
            "skipped": self.skipped,
            "unsigned_ends": self.unsigned_ends,
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
    # builds by the store's clock (a server store's: the database's, which its ends are written on; a
    # replica's own clock set a year forward deleted every FAILED build's files at once; a SQLite file's ends
    # of this boot by the boot clock, ``build_age``), log files by this machine's
    files_now = time.time() if now is None else now
    ahead = 0.0 if now is None else now - time.time()  # a sweep asked to judge a later present
    now = await store.now() if now is None else now
    report = SweepReport(dry_run=dry_run)
    cutoff = now - settings.retention.failed_workspace_days * DAY
    for task_id in await store.failed_before(cutoff, now, ahead):
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
    await trim_kept(root, store, settings, running=running, dry_run=dry_run, report=report)
    # a server store's ended builds whose end no replica signed: kept, and said (never silently forever)
    report.unsigned_ends = [r["task_id"] for r in await store.ends_unsigned()
                            if TASK_DIR.fullmatch(r["task_id"]) and (root / r["task_id"]).is_dir()]
    if report.unsigned_ends:
        report.skipped.append(
            f"{len(report.unsigned_ends)} workspace(s) of builds ended without a signed end (ended before "
            "ends were signed, in SQL, or by a replica that died before signing): kept; `sentinel-mcp swarm "
            "sign-ends` lists them, and signs the ends you vouch for with --yes"
        )
    keep = {"swarm.log": settings.log_retention_days, "swarm-debug.log": settings.retention.debug_log_days}
    logs = root / "logs"
    if logs.is_dir() and not logs.is_symlink():
        for f in sorted(logs.iterdir()):
            for base, pattern in _ROTATED.items():
                if (
                    pattern.match(f.name)
                    and f.is_file()
                    and not f.is_symlink()
                    and files_now - f.stat().st_mtime > keep[base] * DAY
                ):
                    if not dry_run:
                        f.unlink()
                    report.logs.append(f.name)
    return report


def _size(path: Path) -> int:
    """Bytes under ``path``, symlinks counted as themselves (never followed)."""
    total = 0
    for top, _dirs, files in os.walk(path, followlinks=False):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_blocks * 512
            except OSError:
                continue  # gone meanwhile
    return total


async def trim_kept(
    root: Path,
    store: SwarmStore,
    settings: SwarmSettings,
    *,
    principal: str | None = None,
    running: Collection[str] = (),
    dry_run: bool = False,
    report: SweepReport | None = None,
) -> SweepReport:
    """Remove the oldest workspaces of each principal's ended builds (``principal``'s only, when named) past
    its caps, COMPLETED and FAILED alike (a FAILED one is otherwise kept its days, whatever their number);
    only workspaces on this disk count (a replica's are on its own). The room goes to its newest build (its
    files were just made), then to its COMPLETED builds, newest first, then to its FAILED ones: a run of
    failures never pushes out the principal's working apps, and within each kind the oldest go first."""
    report = report if report is not None else SweepReport(dry_run=dry_run)
    most, most_bytes = settings.retention.max_kept_workspaces, settings.retention.max_kept_mib * 1024 * 1024
    by_owner: dict[str, list[tuple[str, str]]] = {}  # principal -> its (task_id, state), newest first
    for task_id, owner, state in await store.ended(principal):
        ws = root / task_id
        if not TASK_DIR.fullmatch(task_id) or task_id in running or ws.is_symlink() or not ws.is_dir():
            continue  # an odd id, a symlink or files elsewhere: never removed here, never counted
        by_owner.setdefault(owner, []).append((task_id, state))
    for builds in by_owner.values():
        newest, older = builds[0], builds[1:]
        ranked = [t for t, s in older if s == "COMPLETED"] + [t for t, s in older if s != "COMPLETED"]
        count, used, full = 1, await asyncio.to_thread(_size, root / newest[0]), False
        for task_id in ranked:
            ws = root / task_id
            size = await asyncio.to_thread(_size, ws)  # a walk of many files: off the event loop
            if not full and count < most and used + size <= most_bytes:
                count, used = count + 1, used + size
                continue
            # past a cap: every older one of this kind goes too, and every FAILED one after the COMPLETED
            full = True
            if not dry_run:
                await asyncio.to_thread(shutil.rmtree, ws)
            report.trimmed.append(task_id)
    return report
