"""A caller waiting on a build (``swarm_build`` with ``wait``) that gives up must hear its own cancellation,
so the tool stops the build; a build cancelled by someone else is a status to report, not the waiter's
cancellation. (The first was taken for the second: under load the build then ran on to COMPLETED.)"""

from __future__ import annotations

import asyncio

import pytest
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import make_service

TID = "t20260101-000000-00000a"


async def test_a_cancelled_waiter_hears_it_and_a_cancelled_build_is_reported(tmp_path) -> None:
    service = make_service(tmp_path, {})
    await service.start(sweep=False)
    try:
        await service.store.create_task(TID, SPEC, tmp_path / "swarm" / TID)
        release = asyncio.Event()
        build = asyncio.create_task(release.wait())
        service._running[TID] = build
        waiter = asyncio.create_task(service.wait(TID))
        await asyncio.sleep(0.05)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert not build.done()  # the waiter's cancellation is not the build's (the tool cancels it)
        waiter = asyncio.create_task(service.wait(TID))
        await asyncio.sleep(0.05)
        build.cancel()
        status = await asyncio.wait_for(waiter, 10)
        assert status["task_id"] == TID
    finally:
        release.set()
        await service.close()
