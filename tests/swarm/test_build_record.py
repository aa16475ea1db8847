"""What a build's row says bound it, and which of a principal's ended builds are kept.

* Red team 'device' 6.1: a build's caps were not recorded in its row. The caps a call asked for (and policy
  lowered) bound the build, but the audit trail kept only what was spent: nobody reading ``swarm.db`` later
  could tell whether 80 model calls was the cap or a call that asked for 5 and overran it. The row now keeps
  the caps in force (limits, breakers, the hourly quota) as the build was started with them.
* Red team 'device' 6.2: a principal's recent failed builds pushed its own older completed ones out of the
  kept workspaces (one cap for both, oldest first): a model failing a few builds in a row erased the
  principal's working apps. Completed builds are now kept before failed ones (the newest build always)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import NO_TOOLS, openai_factory

from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.limits import HARD_MAX_TOKENS
from sentinel_mcp.swarm.settings import swarm_settings
from sentinel_mcp.swarm.state import SwarmStore

pytestmark = pytest.mark.timeout(90)


async def test_a_builds_row_records_the_caps_that_bound_it(tmp_path, model_server) -> None:
    root = tmp_path / "swarm"
    settings = swarm_settings({"backend": "openai", "verify": NO_TOOLS, "max_builds_per_hour": 9,
                               "limits": {"max_steps": 24}, "breakers": {"consecutive_failures": 2}})
    service = BuildService(root, settings)
    await service.start(sweep=False)
    try:
        # a call lowering one cap further, and a build that runs into it
        task = await service.submit(SPEC, openai_factory(model_server), caps={"max_model_calls": 1})
        status = await service.wait(task)
        assert status["state"] == "FAILED" and "model-call limit of 1" in status["error"]
        caps = status["caps"]
        assert caps["limits"]["max_model_calls"] == 1  # the call's
        assert caps["limits"]["max_steps"] == 24  # the configuration's
        assert caps["limits"]["max_tokens"] == HARD_MAX_TOKENS  # the built-in's own
        assert caps["breakers"]["consecutive_failures"] == 2
        assert caps["max_builds_per_hour"] == 9
        # in the store itself (the audit trail read without the service), as JSON
        async with SwarmStore(root / "swarm.db") as store:
            raw = await store.db.query("SELECT caps_json FROM tasks WHERE task_id=?", (task,))
        assert json.loads(raw[0][0]) == caps
        # the next build's row has its own caps, not the last one's
        again = await service.submit(SPEC, openai_factory(model_server), caps={"max_retries": 0})
        caps2 = (await service.wait(again))["caps"]
        assert caps2["limits"]["max_model_calls"] != 1 and caps2["limits"]["max_retries"] == 0
    finally:
        await service.close()


async def test_a_store_from_before_caps_were_recorded_opens_and_says_none(tmp_path) -> None:
    """A row written before the column existed reads as no record of its caps (``None``), not made-up ones."""
    root = tmp_path / "swarm"
    root.mkdir()
    async with SwarmStore(root / "swarm.db") as store:
        await store.create_task("t20260101-000000-0000a0", SPEC, root / "t20260101-000000-0000a0")
        await store.db.write("UPDATE tasks SET caps_json=NULL")
        task = await store.get_task("t20260101-000000-0000a0")
    assert task is not None and task["caps"] is None


async def _ended(root: Path, store: SwarmStore, tid: str, state: str, finished: float, size: int) -> None:
    (root / tid / "app").mkdir(parents=True)
    (root / tid / "app" / "blob").write_bytes(b"x" * size)
    await store.create_task(tid, SPEC, root / tid, principal="alice")
    await store.set_state(tid, state, error="boom" if state == "FAILED" else None)
    await store.db.write("UPDATE tasks SET finished_at=? WHERE task_id=?", (finished, tid))


@pytest.mark.parametrize("cap", ["count", "size"])
async def test_failed_builds_do_not_push_out_completed_ones(tmp_path, cap) -> None:
    """alice completed 3 builds, then 5 failed: with room for 4, her 3 apps stay, with her newest build (a
    failure, its files the diagnosis) beside them; the older failures go, oldest first."""
    root, now = tmp_path / "swarm", time.time()
    root.mkdir()
    done = [f"t20260101-000000-0000{i:02x}" for i in range(3)]
    failed = [f"t20260101-000000-0001{i:02x}" for i in range(5)]
    async with SwarmStore(root / "swarm.db") as store:
        for i, tid in enumerate(done):
            await _ended(root, store, tid, "COMPLETED", now - (100 - i) * 60, 500 * 1024)
        for i, tid in enumerate(failed):
            await _ended(root, store, tid, "FAILED", now - (50 - i) * 60, 500 * 1024)
    retention = {"max_kept_workspaces": 4} if cap == "count" else {"max_kept_mib": 2}
    service = BuildService(root, swarm_settings({"verify": NO_TOOLS, "retention": retention}))
    await service.start(sweep=False)
    try:
        report = await service.gc()
        assert sorted(report.trimmed) == failed[:4], report
        assert [t for t in [*done, *failed] if (root / t).exists()] == [*done, failed[-1]]
        assert (await service.gc()).trimmed == []
    finally:
        await service.close()


async def test_completed_builds_past_the_caps_still_go_oldest_first(tmp_path) -> None:
    """Completed builds are kept first, not forever: past the cap the oldest completed ones go, and a failed
    build older than a kept completed one goes before it."""
    root, now = tmp_path / "swarm", time.time()
    root.mkdir()
    order = [("COMPLETED", "a0"), ("FAILED", "a1"), ("COMPLETED", "a2"), ("COMPLETED", "a3"),
             ("FAILED", "a4"), ("COMPLETED", "a5")]
    ids = {}
    async with SwarmStore(root / "swarm.db") as store:
        for i, (state, suffix) in enumerate(order):
            tid = f"t20260101-000000-0000{suffix}"
            ids[suffix] = tid
            await _ended(root, store, tid, state, now - (100 - i) * 60, 16)
    settings = swarm_settings({"verify": NO_TOOLS, "retention": {"max_kept_workspaces": 3}})
    service = BuildService(root, settings)
    await service.start(sweep=False)
    try:
        await service.gc()
        assert sorted(t for t in ids.values() if (root / t).exists()) == sorted(
            [ids["a2"], ids["a3"], ids["a5"]]
        )
    finally:
        await service.close()
