"""Retention as the design says: failed workspaces go after 7 days, rotated logs after their own retention."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import NO_TOOLS

from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import swarm_settings
from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(60)
DAY = 86400
OLD_FAILED, NEW_FAILED, OLD_DONE = (
    "t20260101-000000-00000a",
    "t20260101-000000-00000b",
    "t20260101-000000-00000c",
)


async def ended_ago(store: SwarmStore, tid: str, now: float, days: float) -> None:
    """The build ended ``days`` days before ``now``, by both clocks its end records (the wall clock's
    ``finished_at`` and the boot clock's ``ended_uptime``, which ages an end of this boot: ``build_age``)."""
    await store.db.write("UPDATE tasks SET finished_at=?, ended_uptime=ended_uptime-? WHERE task_id=?",
                         (now - days * DAY, days * DAY, tid))


async def seed(root: Path, now: float) -> None:
    """Three finished builds with files: failed 8 days ago, failed yesterday, completed 30 days ago."""
    async with SwarmStore(root / "swarm.db") as store:
        for tid, state, age in (
            (OLD_FAILED, "FAILED", 8),
            (NEW_FAILED, "FAILED", 1),
            (OLD_DONE, "COMPLETED", 30),
        ):
            (root / tid / "app").mkdir(parents=True)
            (root / tid / "app" / "x.kt").write_text("package x\n")
            await store.create_task(tid, SPEC, root / tid)
            await store.set_state(tid, state, error="boom" if state == "FAILED" else None)
            await ended_ago(store, tid, now, age)
    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for name, age in (
        ("swarm.log", 0),
        ("swarm.log.2026-01-01", 31),
        ("swarm.log.2026-02-01", 2),
        ("swarm-debug.log.2026-01-20", 8),
        ("swarm-debug.log.2026-01-26", 2),
        ("notes.txt", 90),
    ):
        (logs / name).write_text("x\n")
        os.utime(logs / name, (now - age * DAY, now - age * DAY))


async def test_sweep_removes_what_retention_allows_and_keeps_the_rest(tmp_path) -> None:
    root, now = tmp_path / "swarm", time.time()
    await seed(root, now)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    service = BuildService(root, swarm_settings({"verify": NO_TOOLS}))
    await service.start(sweep=False)
    try:
        # a FAILED task whose "workspace" is a symlink to elsewhere: never followed
        async with SwarmStore(root / "swarm.db") as store:
            await store.create_task("t20260101-000000-00000d", SPEC, root / "t20260101-000000-00000d")
            await store.set_state("t20260101-000000-00000d", "FAILED", error="x")
            await ended_ago(store, "t20260101-000000-00000d", now, 9)
        (root / "t20260101-000000-00000d").symlink_to(outside, target_is_directory=True)

        dry = await service.gc(dry_run=True)
        assert dry.workspaces == [OLD_FAILED] and (root / OLD_FAILED).exists()
        report = await service.gc()
        assert report.workspaces == [OLD_FAILED] and not (root / OLD_FAILED).exists()
        assert sorted(report.logs) == ["swarm-debug.log.2026-01-20", "swarm.log.2026-01-01"]
        assert "symlink" in " ".join(report.skipped)
        assert (root / NEW_FAILED).exists() and (root / OLD_DONE).exists()  # too young; completed builds stay
        assert sorted(p.name for p in (root / "logs").iterdir()) == [
            "notes.txt",
            "swarm-debug.log.2026-01-26",
            "swarm.log",
            "swarm.log.2026-02-01",
        ]
        assert (outside / "keep.txt").read_text() == "mine"
        status = await service.status(OLD_FAILED)  # the audit trail stays; the status says the files are gone
        assert status["state"] == "FAILED" and status["files"] == [] and status["workspace_removed"] is True
        assert (await service.gc()).workspaces == []  # nothing left to do
        # a week later the younger failed build goes too
        assert (await service.gc(now=now + 7 * DAY)).workspaces == [NEW_FAILED]
    finally:
        await service.close()


async def test_the_service_sweeps_by_itself(tmp_path) -> None:
    root = tmp_path / "swarm"
    await seed(root, time.time())
    service = BuildService(root, swarm_settings({"verify": NO_TOOLS, "retention": {"sweep_hours": 0.0002}}))
    await service.start()  # sweeps at once, then every 0.72 s
    try:
        deadline = time.monotonic() + 20
        while (root / OLD_FAILED).exists() and time.monotonic() < deadline:
            await __import__("asyncio").sleep(0.05)
        assert not (root / OLD_FAILED).exists() and (root / NEW_FAILED).exists()
        async with SwarmStore(
            root / "swarm.db"
        ) as store:  # another build fails long ago: the next sweep takes it
            await ended_ago(store, NEW_FAILED, time.time(), 30)
        while (root / NEW_FAILED).exists() and time.monotonic() < deadline:
            await __import__("asyncio").sleep(0.05)
        assert not (root / NEW_FAILED).exists()
    finally:
        await service.close()


def test_gc_command(tmp_path) -> None:
    import asyncio

    data = tmp_path / "data"
    asyncio.run(seed(data / "swarm", time.time()))
    config = tmp_path / "sentinel.json"
    config.write_text(
        json.dumps(
            {
                "sentinel": {
                    "data_dir": str(data),
                    "swarm": {
                        "retention": {"failed_workspace_days": 7, "debug_log_days": 7},
                        "log_retention_days": 30,
                    },
                }
            }
        )
    )

    def gc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "swarm", "gc", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    dry = gc("--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would remove 1 failed workspace(s) older than 7 days, 0 completed workspace(s)" in dry.stdout
    assert "2 log file(s)" in dry.stdout
    assert OLD_FAILED in dry.stdout and (data / "swarm" / OLD_FAILED).exists()
    done = gc("--json")
    assert done.returncode == 0 and json.loads(done.stdout)["workspaces"] == [OLD_FAILED]
    assert not (data / "swarm" / OLD_FAILED).exists() and (data / "swarm" / NEW_FAILED).exists()
    assert json.loads(gc("--json").stdout) == {
        "workspaces": [], "trimmed": [], "logs": [], "skipped": [], "unsigned_ends": [], "dry_run": False
    }


async def test_debug_log_has_its_own_file(tmp_path, model_server) -> None:
    from tests.swarm.support.swarm_fixtures import openai_factory

    service = BuildService(
        tmp_path / "swarm", swarm_settings({"backend": "openai", "verify": NO_TOOLS, "debug_log": True})
    )
    await service.start(sweep=False)
    logger = logging.getLogger("sentinel.swarm")
    try:
        task_id = await service.submit(SPEC, openai_factory(model_server))
        assert (await service.wait(task_id))["state"] == "COMPLETED"
    finally:
        await service.close()
        for h in [h for h in logger.handlers if str(tmp_path) in str(getattr(h, "baseFilename", ""))]:
            logger.removeHandler(h)
            h.close()
        logger.propagate, logger.level = True, logging.INFO  # this process's other tests log as before
    debug = (tmp_path / "swarm" / "logs" / "swarm-debug.log").read_text()
    assert f"task {task_id}: planner call" in debug and "coder call (step 7)" in debug
    info = (tmp_path / "swarm" / "logs" / "swarm.log").read_text()
    assert "planner call" not in info and task_id in info


async def _completed(
    root: Path, store: SwarmStore, tid: str, principal: str, finished: float, size: int
) -> None:
    (root / tid / "app").mkdir(parents=True)
    (root / tid / "app" / "blob").write_bytes(b"x" * size)
    await store.create_task(tid, SPEC, root / tid, principal=principal)
    await store.set_state(tid, "COMPLETED")
    await store.db.write("UPDATE tasks SET finished_at=? WHERE task_id=?", (finished, tid))


async def test_a_principals_kept_builds_are_capped_oldest_first_never_anothers(tmp_path) -> None:
    """COMPLETED workspaces were kept forever: one principal starting 30 builds an hour filled the disk. Now
    each principal keeps at most ``retention.max_kept_workspaces`` and ``retention.max_kept_mib`` of them,
    its oldest removed first; another principal's builds and what is outside the root are never touched."""
    root, now = tmp_path / "swarm", time.time()
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    heavy = [f"t20260101-000000-0000{i:02x}" for i in range(6)]  # mallory's, oldest first
    alice = ["t20260101-000000-0001a0", "t20260101-000000-0001a1", "t20260101-000000-0001a2"]
    async with SwarmStore(root / "swarm.db") as store:
        for i, tid in enumerate(heavy):
            await _completed(root, store, tid, "mallory", now - (100 - i) * 60, 600 * 1024)
        for i, tid in enumerate(alice):
            await _completed(root, store, tid, "alice", now - (200 - i) * 60, 16)
        # one of mallory's older builds' "workspace" is a symlink out of the root: left alone, never followed
        link = "t20260101-000000-0002ff"
        await store.create_task(link, SPEC, root / link, principal="mallory")
        await store.set_state(link, "COMPLETED")
        await store.db.write("UPDATE tasks SET finished_at=? WHERE task_id=?", (now - 500 * 60, link))
        (root / link).symlink_to(outside, target_is_directory=True)
    settings = swarm_settings(
        {"verify": NO_TOOLS, "retention": {"max_kept_workspaces": 4, "max_kept_mib": 2}}
    )
    service = BuildService(root, settings)
    await service.start(sweep=False)
    try:
        report = await service.gc()
        # by count mallory keeps its 4 newest; by size (2 MiB, 600 KiB each) only 3 of them
        assert sorted(report.trimmed) == heavy[:3] and report.workspaces == [], report
        assert [t for t in heavy if (root / t).exists()] == heavy[3:]
        assert all((root / t).exists() for t in alice)  # another principal's builds stay
        assert (outside / "keep.txt").read_text() == "mine" and (root / link).is_symlink()
        assert (await service.status(heavy[0]))["workspace_removed"] is True  # the row (the audit) stays
        assert (await service.gc()).trimmed == []
    finally:
        await service.close()


async def test_a_finished_build_trims_its_principals_kept_builds_at_once(tmp_path, model_server) -> None:
    """The sweep runs every few hours; 30 builds an hour come between two sweeps. A build that completes
    trims its own principal's kept builds then and there."""
    from tests.swarm.support.swarm_fixtures import openai_factory

    root = tmp_path / "swarm"
    service = BuildService(
        root,
        swarm_settings({"backend": "openai", "verify": NO_TOOLS, "retention": {"max_kept_workspaces": 1}}),
    )
    await service.start(sweep=False)
    try:
        first = await service.submit(SPEC, openai_factory(model_server), principal="p")
        assert (await service.wait(first))["state"] == "COMPLETED"
        second = await service.submit(SPEC, openai_factory(model_server), principal="p")
        assert (await service.wait(second))["state"] == "COMPLETED"
        assert not (root / first).exists() and (root / second).is_dir()
    finally:
        await service.close()


@pytest.mark.parametrize("key,value", [("max_kept_workspaces", 0), ("max_kept_workspaces", 10**9),
                                       ("max_kept_mib", 0), ("max_kept_mib", 10**12)])
def test_kept_build_caps_are_bounded(key, value) -> None:
    from sentinel_mcp.config import ConfigError

    with pytest.raises(ConfigError, match=rf"sentinel.swarm.retention.{key}: "):
        swarm_settings({"retention": {key: value}})


async def test_a_principals_failed_builds_count_toward_its_kept_caps(tmp_path, model_server) -> None:
    """Red team 'swarm' 5: only COMPLETED workspaces counted toward a principal's caps; a FAILED build's files
    stayed 7 days whatever their number: a principal whose builds fail (its own model answering the last
    step wrong, or cancelling each build once its files were made) kept 30 an hour, 5,040 a week, past
    ``max_kept_workspaces`` and ``max_kept_mib``. Now every ended build of a principal counts, oldest first,
    its newest always kept; another principal's never."""
    from tests.swarm.support.swarm_fixtures import openai_factory

    root, now = tmp_path / "swarm", time.time()
    root.mkdir()
    failed = [f"t20260101-000000-0000{i:02x}" for i in range(6)]  # mallory's, oldest first, within 7 days
    alice = ["t20260101-000000-0001a0", "t20260101-000000-0001a1"]
    async with SwarmStore(root / "swarm.db") as store:
        for i, tid in enumerate(failed):
            await _completed(root, store, tid, "mallory", now - (100 - i) * 60, 600 * 1024)
            await store.db.write("UPDATE tasks SET state='FAILED', error='step 15' WHERE task_id=?", (tid,))
        for i, tid in enumerate(alice):
            await _completed(root, store, tid, "alice", now - (200 - i) * 60, 16)
            await store.db.write("UPDATE tasks SET state='FAILED' WHERE task_id=?", (tid,))
    settings = swarm_settings({"backend": "openai", "verify": NO_TOOLS,
                               "retention": {"max_kept_workspaces": 4, "max_kept_mib": 2}})
    service = BuildService(root, settings)
    await service.start(sweep=False)
    try:
        # a build that ends FAILED (its model calls capped at the planner's one) trims its principal's kept
        # builds at once: by count mallory keeps 4 (that build and 3 more); by size (2 MiB) as many
        task = await service.submit(SPEC, openai_factory(model_server), principal="mallory",
                                    caps={"max_model_calls": 1})
        assert (await service.wait(task))["state"] == "FAILED"
        assert [t for t in [*failed, task] if (root / t).exists()] == [*failed[3:], task]
        assert all((root / t).exists() for t in alice)  # another principal's builds stay
        report = await service.gc()
        assert report.workspaces == [] and report.trimmed == [], report  # none is 7 days old; within caps
        assert (await service.status(failed[0]))["workspace_removed"] is True  # the row (the audit) stays
    finally:
        await service.close()
