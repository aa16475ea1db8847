"""A deadline armed only if the step waits (``gateway/step_deadline.py``): the same results, errors and
cancellations as ``async with asyncio.timeout_at(when): await step()``, and no timer for a step that never
waits."""

from __future__ import annotations

import asyncio

import pytest

from sentinel_mcp.gateway import step_deadline
from sentinel_mcp.gateway.step_deadline import Resumed, StepDeadline


def soon(seconds: float) -> float:
    return asyncio.get_running_loop().time() + seconds


async def test_a_step_that_never_waits_takes_no_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    armed: list[float] = []
    real = step_deadline.asyncio.timeout_at
    monkeypatch.setattr(step_deadline.asyncio, "timeout_at", lambda when: armed.append(when) or real(when))

    async def at_once() -> str:
        return "done"

    deadline = StepDeadline(soon(-1))  # even one already past: nothing could have ended it
    assert await deadline.run(at_once) == "done" and armed == [] and not deadline.expired

    async def waits() -> str:
        await asyncio.sleep(0)
        return "later"

    assert await StepDeadline(soon(5)).run(waits) == "later" and len(armed) == 1


async def test_what_a_waiting_step_awaits_reaches_it() -> None:
    loop = asyncio.get_running_loop()

    async def step() -> list[object]:
        got: list[object] = []
        for value in ("a", 2, None):
            fut = loop.create_future()
            loop.call_soon(fut.set_result, value)
            got.append(await fut)
        fut = loop.create_future()
        loop.call_soon(fut.set_exception, KeyError("k"))
        try:
            await fut
        except KeyError as e:
            got.append(e.args[0])
        return got

    deadline = StepDeadline(soon(5))
    assert await deadline.run(step) == ["a", 2, None, "k"] and not deadline.expired


async def test_past_its_deadline_a_waiting_step_is_cancelled_and_the_run_times_out() -> None:
    seen: list[str] = []

    async def step() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        finally:
            seen.append("finally")

    deadline = StepDeadline(soon(0.05))
    with pytest.raises(TimeoutError):
        await deadline.run(step)
    assert deadline.expired and seen == ["cancelled", "finally"]


async def test_a_steps_own_timeout_error_is_not_the_deadlines() -> None:
    async def step() -> None:
        await asyncio.sleep(0)
        raise TimeoutError("its own")

    deadline = StepDeadline(soon(5))
    with pytest.raises(TimeoutError, match="its own"):
        await deadline.run(step)
    assert not deadline.expired


async def test_a_cancellation_from_outside_stays_a_cancellation() -> None:
    seen: list[str] = []
    started = asyncio.Event()

    async def step() -> None:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    deadline = StepDeadline(soon(30))
    task = asyncio.ensure_future(deadline.run(step))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"] and not deadline.expired


async def test_an_awaitable_that_is_not_a_coroutine_runs_under_the_timer() -> None:
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    loop.call_later(0.01, fut.set_result, 7)
    assert await StepDeadline(soon(5)).run(lambda: fut) == 7
    never = loop.create_future()
    deadline = StepDeadline(soon(0.02))
    with pytest.raises(TimeoutError):
        await deadline.run(lambda: never)
    assert deadline.expired


async def test_closing_a_resumed_coroutine_closes_the_step() -> None:
    seen: list[str] = []

    async def step() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            seen.append("closed")

    coro = step()
    waiting_on = coro.send(None)
    gen = Resumed(coro, waiting_on).__await__()
    assert gen.send(None) is waiting_on
    gen.close()
    assert seen == ["closed"]
    if asyncio.isfuture(waiting_on):
        waiting_on.cancel()


async def test_a_deadline_moved_before_the_step_waits_is_the_one_armed() -> None:
    deadline = StepDeadline(soon(0.01))

    async def step() -> str:
        deadline.reschedule(soon(5))  # a progress report made before the first wait
        await asyncio.sleep(0.05)
        return "in time"

    assert await deadline.run(step) == "in time" and not deadline.expired
    early = StepDeadline(soon(5))

    async def late() -> str:
        early.reschedule(soon(0.01))
        await asyncio.sleep(5)
        return "never"

    with pytest.raises(TimeoutError):
        await early.run(late)
    assert early.expired


async def test_a_waiting_step_moved_to_minus_infinity_ends_now_and_a_done_one_cannot_move() -> None:
    import math

    loop = asyncio.get_running_loop()
    deadline = StepDeadline(soon(60))
    waiting = loop.create_future()
    loop.call_soon(lambda: deadline.reschedule(-math.inf))  # what an upstream's garbage does to its calls
    with pytest.raises(TimeoutError):
        await deadline.run(lambda: waiting)
    assert deadline.expired and waiting.cancelled()

    done = StepDeadline(soon(5))

    async def waits_once() -> str:
        await asyncio.sleep(0)
        return "ok"

    assert await done.run(waits_once) == "ok"
    with pytest.raises(RuntimeError):
        done.reschedule(soon(10))  # as asyncio's own timeout once exited


async def test_a_deadline_is_never_moved_past_its_latest() -> None:
    """``latest`` bounds every move (so a later deadline under it in the same task is needless:
    ``bounds``); a waiting step moved past it ends at ``latest``."""
    start = soon(0)
    deadline = StepDeadline(start + 0.05, latest=start + 0.1, since=start)
    assert deadline.bounds(0.1) and deadline.bounds(5) and not deadline.bounds(0.09)
    deadline.reschedule(start + 60)
    assert deadline.when == start + 0.1

    async def waits() -> None:
        deadline.reschedule(soon(60))  # moved while waiting: still ends at latest
        await asyncio.sleep(30)

    with pytest.raises(TimeoutError):
        await deadline.run(waits)
    assert deadline.expired and asyncio.get_running_loop().time() < start + 5
    assert StepDeadline(start + 9, latest=start + 1).when == start + 1
    assert StepDeadline(start).bounds(1e9) is False  # no latest: bounds nothing
    assert StepDeadline(start, latest=start + 1).bounds(1e9) is False  # no since: a limit set when?
