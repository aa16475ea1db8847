"""Cancellation, the one-build lock, restart recovery and the wall-clock cap."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from tests.swarm.support.scripted_model import PLAN_PATHS, SPEC, answer_for, schema_of
from tests.swarm.support.swarm_fixtures import openai_factory

from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend, OpenAISettings
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.limits import Limits
from sentinel_mcp.swarm.orchestrator import Orchestrator
from sentinel_mcp.swarm.settings import swarm_settings
from sentinel_mcp.swarm.spec import parse_spec
from sentinel_mcp.swarm.state import SwarmStore
from sentinel_mcp.swarm.task_lock import BuildBusyError
from sentinel_mcp.swarm.workspace import Workspace

pytestmark = pytest.mark.timeout(60)


async def until(predicate) -> None:
    while not predicate():
        await asyncio.sleep(0.01)


async def test_cancellation_mid_run_fails_the_task_and_keeps_state(service, model_server, tmp_path) -> None:
    def answer(body):
        return json.dumps(answer_for(schema_of(body)))

    model_server.script("coder", answer, answer, {"hold": True})
    task_id = await service.submit(SPEC, openai_factory(model_server))
    await until(lambda: any(r.get("held") for r in model_server.requests))  # step 9 is being decided
    assert service.lock.path.exists()
    assert await service.cancel(task_id) is True
    model_server.release.set()
    status = await service.status(task_id)
    assert status["state"] == "FAILED" and status["error"] == "cancelled"
    assert status["plan"] is not None and status["finished_at"] is not None
    assert [s["status"] for s in status["steps"]] == ["ACCEPTED"] * 8
    assert status["files"] == sorted(PLAN_PATHS[:8])  # kept
    assert not service.lock.path.exists()
    assert status["model_calls"] == 6  # planner, 2 x (coder, critic), and the cancelled coder call
    assert [(s["role"], s["status"]) for s in await service.store.api_calls_of(task_id)][-2:] == [
        ("critic", "OK"), ("coder", "ERROR")]
    assert await service.cancel(task_id) is False  # not running any more


async def test_one_build_at_a_time(service, model_server) -> None:
    model_server.hold.clear()
    first = await service.submit(SPEC, openai_factory(model_server))
    with pytest.raises(BuildBusyError, match=f"a build is already running \\(task {first}"):
        await service.submit(SPEC, openai_factory(model_server))
    model_server.hold.set()
    assert (await service.wait(first))["state"] == "COMPLETED"
    second = await service.submit(SPEC, openai_factory(model_server))
    assert (await service.wait(second))["state"] == "COMPLETED"


async def test_lock_of_a_dead_process_is_reclaimed(service, model_server) -> None:
    service.lock.path.write_text('{"pid": 999999999, "task_id": "t00000000-000000-000000"}')
    task_id = await service.submit(SPEC, openai_factory(model_server))
    assert (await service.wait(task_id))["state"] == "COMPLETED"


async def test_restart_marks_interrupted_tasks_failed(tmp_path: Path) -> None:
    root = tmp_path / "swarm"
    async with SwarmStore(root / "swarm.db") as store:
        await store.create_task("t20260101-000000-abcdef", SPEC, root / "t20260101-000000-abcdef")
        await store.set_state("t20260101-000000-abcdef", "EXECUTING")
    service = BuildService(root, swarm_settings({}))
    await service.start()
    try:
        status = await service.status("t20260101-000000-abcdef")
        assert status["state"] == "FAILED" and status["error"].startswith("interrupted")
    finally:
        await service.close()


async def test_wall_clock_cap_is_checked_before_each_agent(tmp_path: Path, model_server) -> None:
    now = [0.0]

    def clock() -> float:  # every reading is one minute later: deterministic, no sleeping
        now[0] += 60.0
        return now[0]

    async with SwarmStore(tmp_path / "swarm.db") as store:
        await store.create_task("t20260101-000000-000001", SPEC, tmp_path / "ws")
        backend = OpenAIBackend(OpenAISettings(model="m"), model_server.url, "test-key")
        orch = Orchestrator(task_id="t20260101-000000-000001", spec=parse_spec(SPEC), store=store,
                            backend=backend, workspace=Workspace(tmp_path / "ws").create(),
                            limits=Limits().lowered(max_wall_seconds=240), clock=clock)
        assert await orch.run() == "FAILED"
        await backend.aclose()
        task = await store.get_task("t20260101-000000-000001")
    assert task["error"] == "wall-clock limit of 240 s reached"
    assert 0 < len(model_server.requests) < 4


def test_lock_file_names_its_owner(tmp_path: Path) -> None:
    from sentinel_mcp.swarm.task_lock import TaskLock
    lock = TaskLock(tmp_path / "swarm.lock")
    lock.acquire("t1")
    assert {k: v for k, v in lock.holder().items() if k != "started"} == {"pid": os.getpid(), "task_id": "t1"}
    with pytest.raises(BuildBusyError):
        TaskLock(tmp_path / "swarm.lock").acquire("t2")
    lock.release()
    assert lock.holder() is None
    # a live pid whose start time differs is a recycled pid, not the owner: the lock is reclaimed
    (tmp_path / "swarm.lock").write_text(json.dumps({"pid": os.getpid(), "task_id": "t0", "started": 1}))
    lock.acquire("t3")
    assert lock.holder()["task_id"] == "t3"
