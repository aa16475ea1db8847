"""A cancel that races a build's completion: the build has ended COMPLETED and is winding down (its progress
said "completed", its model backend is closing) when a ``swarm_cancel`` arrives.

Found by red team 'swarm' 4: the cancel landed inside the runner's wind-down, so the one build slot was never
released (every later build of every principal refused, "a build is already running") and a COMPLETED build
was rewritten FAILED ("cancelled"), its workspace then removed by retention. An ended build stays ended, and a
runner's wind-down finishes whatever cancels it."""

from __future__ import annotations

import asyncio

import pytest
from tests.swarm.support.scripted_model import SPEC, ScriptedModelServer
from tests.swarm.support.swarm_fixtures import FAST_OPENAI

from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend, OpenAISettings
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.orchestrator import ProgressEvent

pytestmark = pytest.mark.timeout(60)


class _SlowToClose(OpenAIBackend):
    """The real backend whose close takes a while (a TLS goodbye to a slow endpoint): it says when it is
    closing and finishes when let."""

    def __init__(self, server: ScriptedModelServer) -> None:
        super().__init__(OpenAISettings(**FAST_OPENAI), server.url, "test-key")
        self.closing = asyncio.Event()
        self.let_close = asyncio.Event()

    async def aclose(self) -> None:
        self.closing.set()
        await self.let_close.wait()
        await super().aclose()


async def test_a_cancel_while_a_completed_build_closes_its_backend_frees_the_slot(
    service: BuildService, model_server: ScriptedModelServer
) -> None:
    backends: list[_SlowToClose] = []

    async def factory() -> OpenAIBackend:
        backends.append(_SlowToClose(model_server))
        return backends[-1]

    task_id = await service.submit(SPEC, factory)
    await asyncio.wait_for(backends[0].closing.wait(), 30)  # COMPLETED, winding down
    cancel = asyncio.create_task(service.cancel(task_id))
    await asyncio.sleep(0)  # the cancel reaches the runner while it closes its backend
    backends[0].let_close.set()
    assert await asyncio.wait_for(cancel, 30) is False  # nothing was cancelled: it had ended
    status = await service.status(task_id)
    assert status["state"] == "COMPLETED", status["error"]
    assert not service.lock.held and not service.lock.path.exists()
    assert not service.is_running(task_id)
    # the slot is free: the next build (any principal's) starts and completes
    backends.clear()
    nxt = await service.submit(SPEC, factory, principal="someone-else")
    await asyncio.wait_for(backends[0].closing.wait(), 30)
    backends[0].let_close.set()
    assert (await service.wait(nxt))["state"] == "COMPLETED"


async def test_a_cancel_after_the_build_completed_leaves_it_completed(
    service: BuildService, model_server: ScriptedModelServer
) -> None:
    """The cancel arrives while the runner reports "completed" to a waiting caller (its progress notification
    on its way): the build is COMPLETED in the store already and stays so."""
    from tests.swarm.support.swarm_fixtures import openai_factory

    reporting, let_report = asyncio.Event(), asyncio.Event()

    async def listener(event: ProgressEvent) -> None:
        if event.message.startswith("completed"):
            reporting.set()
            await let_report.wait()

    task_id = await service.submit(SPEC, openai_factory(model_server), listener=listener)
    await asyncio.wait_for(reporting.wait(), 30)
    assert (await service.store.get_task(task_id) or {})["state"] == "COMPLETED"
    assert await service.cancel(task_id) is False
    let_report.set()
    status = await service.status(task_id)
    assert status["state"] == "COMPLETED" and status["error"] is None, status["error"]
    assert not service.lock.held


async def test_a_backend_that_never_closes_does_not_keep_the_slot(
    service: BuildService, model_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend's close is its own code (an HTTP client's, a client's session): one that never returns held
    the one build slot for good after its build had ended."""
    from sentinel_mcp.swarm import build_service

    monkeypatch.setattr(build_service, "BACKEND_CLOSE_SECONDS", 0.2)
    stuck = _SlowToClose(model_server)

    async def factory() -> OpenAIBackend:
        return stuck

    task_id = await service.submit(SPEC, factory)
    assert (await asyncio.wait_for(service.wait(task_id), 30))["state"] == "COMPLETED"
    assert stuck.closing.is_set() and not service.lock.held and not service.is_running(task_id)
    stuck.let_close.set()
    await stuck.aclose()


async def test_a_waiting_caller_that_stops_listening_does_not_hold_the_build(
    service: BuildService, model_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller's progress is sent to it while the build runs (on its connection, written as it reads): a
    caller that stops reading held the build at its next progress report, its caps (the wall clock among
    them) never looked at again and the one build slot held for good. Now a report that is not taken in time
    is dropped, with the listener."""
    from tests.swarm.support.swarm_fixtures import openai_factory

    from sentinel_mcp.swarm import build_service

    monkeypatch.setattr(build_service, "LISTENER_SECONDS", 0.2)
    heard: list[str] = []

    async def deaf(event: ProgressEvent) -> None:
        heard.append(event.message)
        await asyncio.Event().wait()  # never returns: the caller reads nothing more

    task_id = await service.submit(SPEC, openai_factory(model_server), listener=deaf)
    status = await asyncio.wait_for(service.wait(task_id), 30)
    assert status["state"] == "COMPLETED" and heard == ["planning"]
    assert not service.lock.held
