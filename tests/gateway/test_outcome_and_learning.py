"""After a forwarded call, the guard learns from its result while the outcome row is committed (two files, two
fsyncs, in parallel): both must still be done before the answer leaves, a guard that fails to learn must not
fail the call, and the result the guard learns from is the upstream's own (the untrusted mark is for the
client).
"""

from __future__ import annotations

import anyio
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config


class SlowLearner:
    """Wraps the gateway's guard: ``observe`` takes a while (a slow fact store), and may fail."""

    def __init__(self, inner, delay: float, fail: bool = False) -> None:  # noqa: ANN001
        self.inner = inner
        self.delay = delay
        self.fail = fail
        self.learned: list[tuple[str, str]] = []  # (tool, first text of the result it saw)

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else is the real guard's
        return getattr(self.inner, name)

    async def decide(self, call):  # noqa: ANN001, ANN201
        return await self.inner.decide(call)

    def observes(self, call, result) -> bool:  # noqa: ANN001 - it overrides observe: it says so
        return True

    async def observe(self, call, result) -> None:  # noqa: ANN001
        await anyio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("fact store broke")
        self.learned.append((call.name, result.content[0].text if result.content else ""))


async def test_answer_waits_for_both_the_outcome_row_and_the_learning(data_dir):
    cfg = make_config(data_dir, fork=True)
    async with running_gateway(cfg) as rt:
        learner = SlowLearner(rt.gateway.guard, delay=0.3)
        rt.gateway.guard = learner
        async with Client(rt.front.server) as c:
            for word in ("one", "two"):
                result = await c.call_tool("tb__echo", {"text": word})
                assert not result.is_error and result.content[0].text == word
                # answered: the guard had learned from exactly this result, and the outcome row is on disk
                assert learner.learned[-1] == ("tb__echo", word)
                rows = await rt.audit.read(tail=10)
                row = next(r for r in rows if r["decision_id"] == result.meta["sentinel/decision_id"])
                assert (row["event"], row["outcome"]) == ("outcome", "ok")
        assert len(learner.learned) == 2


async def test_a_guard_that_cannot_learn_does_not_fail_the_call(data_dir):
    cfg = make_config(data_dir, fork=True)
    async with running_gateway(cfg) as rt:
        rt.gateway.guard = SlowLearner(rt.gateway.guard, delay=0.0, fail=True)
        async with Client(rt.front.server) as c:
            result = await c.call_tool("tb__echo", {"text": "still answered"})
        assert not result.is_error and result.content[0].text == "still answered"
        rows = await rt.audit.read(tail=5)
        assert rows[-1]["outcome"] == "ok"


async def test_the_guard_learns_from_the_upstreams_result_not_the_marked_one(data_dir):
    cfg = make_config(data_dir, fork=True, untrusted={"tb__echo": "a web page"})
    async with running_gateway(cfg) as rt:
        learner = SlowLearner(rt.gateway.guard, delay=0.0)
        rt.gateway.guard = learner
        async with Client(rt.front.server) as c:
            result = await c.call_tool("tb__echo", {"text": "plain words"})
        assert learner.learned == [("tb__echo", "plain words")]
        assert result.content[0].text != "plain words"  # the client's copy carries the untrusted mark


class Learner:
    """Wraps the gateway's guard: ``observe`` blocks until cancelled (and says so)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.started = anyio.Event()
        self.cancelled = False

    def __getattr__(self, name: str):  # noqa: ANN204 - everything else is the real guard's
        return getattr(self.inner, name)

    async def decide(self, call):  # noqa: ANN001, ANN201
        return await self.inner.decide(call)

    def observes(self, call, result) -> bool:  # noqa: ANN001 - it overrides observe: it says so
        return True

    async def observe(self, call, result) -> None:  # noqa: ANN001
        self.started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            self.cancelled = True
            raise


async def test_a_call_cancelled_while_the_guard_learns_takes_the_learning_with_it(data_dir):
    """The learning runs beside the outcome row; a call cancelled meanwhile leaves nothing running."""
    cfg = make_config(data_dir, fork=True)
    async with running_gateway(cfg) as rt:
        learner = Learner(rt.gateway.guard)
        rt.gateway.guard = learner
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await rt.gateway.execute("tb__echo", {"text": "x"}, session_id="owner/cancel-test")

            tg.start_soon(call)
            await learner.started.wait()
            tg.cancel_scope.cancel()
        assert learner.cancelled  # cancelled with the call, and awaited: not left running
        assert rt.gateway.inflight == 0


class StuckGuard:
    """A guard whose decision never comes."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.asked = 0

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self.inner, name)

    async def decide(self, call):  # noqa: ANN001, ANN201
        self.asked += 1
        await anyio.sleep_forever()


async def test_a_guard_that_does_not_answer_in_time_denies_and_nothing_is_forwarded(data_dir):
    cfg = make_config(data_dir, fork=True, policy={"guard_timeout": 0.2})
    async with running_gateway(cfg) as rt:
        stuck = StuckGuard(rt.gateway.guard)
        rt.gateway.guard = stuck
        async with Client(rt.front.server) as c:
            for _ in range(2):  # the deadline is per decision, not spent once
                result = await c.call_tool("tb__echo", {"text": "must not run"})
                assert result.is_error
                assert "timed out" in result.content[0].text
                assert "must not run" not in result.content[0].text
        rows = await rt.audit.read(tail=5)
        assert [(r["decision"], r["outcome"]) for r in rows] == [("deny", "denied")] * 2
        assert all("forwarded" != r["outcome"] for r in rows) and stuck.asked == 2
