"""The guard's deadline (asyncio's own timeout, issue 21): a guard that does not answer in time denies and
nothing is forwarded, also inside an outer anyio scope; a call cancelled from outside while the guard thinks
stays cancelled (no deny row pretending it timed out), and the guard's work is cancelled with it."""

from __future__ import annotations

import anyio

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.port import Completed, Refused

from .helpers import make_config


class StuckGuard:
    """A guard whose decision never comes; it notes when it is asked and when it is cancelled."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.asked = anyio.Event()
        self.cancelled = 0

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else is the real guard's
        return getattr(self.inner, name)

    async def decide(self, call):  # noqa: ANN001, ANN201
        self.asked.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise


async def test_the_deadline_denies_inside_an_outer_anyio_scope(data_dir):
    cfg = make_config(data_dir, policy={"guard_timeout": 0.2})
    async with running_gateway(cfg) as rt:
        stuck = StuckGuard(rt.gateway.guard)
        rt.gateway.guard = stuck
        with anyio.CancelScope(deadline=anyio.current_time() + 60) as outer:  # never reached
            result = await rt.gateway.execute("tb__echo", {"text": "must not run"}, session_id="o/s")
        assert not outer.cancelled_caught
        assert isinstance(result, Refused) and result.decision.unmet == ["guard_timeout"]
        assert "timed out" in result.reason and "must not run" not in result.reason
        assert stuck.cancelled == 1  # the guard's step was cancelled by its deadline
        rows = await rt.audit.read(tail=5)
        assert [(r["decision"], r["outcome"]) for r in rows] == [("deny", "denied")]


async def test_a_call_cancelled_while_the_guard_decides_stays_cancelled(data_dir):
    cfg = make_config(data_dir, policy={"guard_timeout": 60})
    async with running_gateway(cfg) as rt:
        stuck = StuckGuard(rt.gateway.guard)
        rt.gateway.guard = stuck
        answers: list[object] = []
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                answers.append(await rt.gateway.execute("tb__echo", {"text": "x"}, session_id="o/cancel"))

            tg.start_soon(call)
            await stuck.asked.wait()
            tg.cancel_scope.cancel()
        assert answers == []  # cancelled, not turned into a (timed out) denial
        assert stuck.cancelled == 1 and rt.gateway.inflight == 0
        rows = await rt.audit.read(tail=5)
        assert not any(r["outcome"] == "forwarded" for r in rows)
        assert not any("timed out" in (r["reason"] or "") for r in rows)
        # the next call is decided normally
        rt.gateway.guard = stuck.inner
        result = await rt.gateway.execute("tb__echo", {"text": "after"}, session_id="o/cancel")
        assert isinstance(result, Completed) and result.result.content[0].text == "after"


async def test_a_cancellation_from_outside_and_the_deadline_together_stay_a_cancellation(data_dir):
    """The outer scope's deadline and the guard's fall together: the outer one wins (no deny is returned
    into a scope that was cancelled)."""
    cfg = make_config(data_dir, policy={"guard_timeout": 0.3})
    async with running_gateway(cfg) as rt:
        stuck = StuckGuard(rt.gateway.guard)
        rt.gateway.guard = stuck
        answers: list[object] = []
        with anyio.move_on_after(0.1) as outer:
            answers.append(await rt.gateway.execute("tb__echo", {"text": "x"}, session_id="o/both"))
        assert outer.cancelled_caught and answers == [] and stuck.cancelled == 1


class PacedGuard:
    """A guard that thinks synchronously for ``busy`` seconds, then waits ``waits`` times (``pause`` each)
    before deciding as the real guard does, or failing with ``error``."""

    def __init__(self, inner, *, busy: float = 0.0, waits: int = 0, pause: float = 0.01,  # noqa: ANN001
                 error: Exception | None = None) -> None:
        self.inner, self.busy, self.waits, self.pause, self.error = inner, busy, waits, pause, error

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self.inner, name)

    async def decide(self, call):  # noqa: ANN001, ANN201
        import time

        end = time.monotonic() + self.busy
        while time.monotonic() < end:
            pass  # holds the loop: no deadline can end this part, before or after this change
        for _ in range(self.waits):
            await anyio.sleep(self.pause)
        if self.error is not None:
            raise self.error
        return await self.inner.decide(call)


async def test_a_guard_that_never_waits_is_decided_without_a_timer(data_dir, monkeypatch):
    from sentinel_mcp.gateway import ask_rounds

    armed: list[float] = []

    class Counting(ask_rounds.StepDeadline):
        """The guard's deadline, noting when it arms its timer (the upstream call has a deadline of its own,
        armed when the call to the stdio upstream waits: not counted here)."""

        async def _timed(self, awaitable):  # noqa: ANN001, ANN202
            armed.append(self.when)
            return await super()._timed(awaitable)

    monkeypatch.setattr(ask_rounds, "StepDeadline", Counting)
    cfg = make_config(data_dir, policy={"guard_timeout": 5})
    async with running_gateway(cfg) as rt:
        rt.gateway.guard = PacedGuard(rt.gateway.guard)  # decides at once
        result = await rt.gateway.execute("tb__echo", {"text": "now"}, session_id="o/now")
        assert isinstance(result, Completed) and result.result.content[0].text == "now"
        assert armed == []
        rt.gateway.guard = PacedGuard(rt.gateway.guard.inner, waits=3)  # waits: under the deadline
        result = await rt.gateway.execute("tb__echo", {"text": "later"}, session_id="o/later")
        assert isinstance(result, Completed) and result.result.content[0].text == "later"
        assert len(armed) == 1


async def test_the_deadline_counts_from_the_start_of_the_decision(data_dir):
    """A guard busy past its deadline before it first waits is denied at that wait (the deadline is the
    decision's start plus the timeout, as before), not given the whole timeout again."""
    cfg = make_config(data_dir, policy={"guard_timeout": 0.2})
    async with running_gateway(cfg) as rt:
        rt.gateway.guard = PacedGuard(rt.gateway.guard, busy=0.3, waits=1, pause=30)
        with anyio.fail_after(10):
            result = await rt.gateway.execute("tb__echo", {"text": "x"}, session_id="o/busy")
        assert isinstance(result, Refused) and result.decision.unmet == ["guard_timeout"]


async def test_an_error_after_a_wait_denies_as_before(data_dir):
    cfg = make_config(data_dir, policy={"guard_timeout": 5})
    async with running_gateway(cfg) as rt:
        for waits in (0, 2):
            rt.gateway.guard = PacedGuard(getattr(rt.gateway.guard, "inner", rt.gateway.guard), waits=waits,
                                          error=RuntimeError("kaput"))
            result = await rt.gateway.execute("tb__echo", {"text": "x"}, session_id=f"o/err{waits}")
            assert isinstance(result, Refused) and result.decision.unmet == ["guard_error"], waits
