"""An upstream call's deadline (asyncio's own timeout, issue 21): a silent call times out with its reason and
leaves the connection usable; progress moves the deadline; a cancellation from outside stays a
cancellation, also when the deadline falls at the same time."""

from __future__ import annotations

import anyio
import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.upstream import BuiltinTarget, UpstreamCallError

from .helpers import make_config
from .twin_builtin import build_twin

pytestmark = pytest.mark.timeout(90)


async def test_a_silent_call_times_out_and_the_connection_stays_usable(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = rt.manager.add("tm", BuiltinTarget(server=build_twin(), timeout=0.3, max_call_seconds=5))
        assert await up.wait_ready(20), up.last_error
        for _ in range(2):  # a deadline per call, not spent once
            with pytest.raises(UpstreamCallError) as caught:
                await up.call_tool("sleep", {"seconds": 30})
            assert caught.value.timeout and caught.value.code == -32001
            assert str(caught.value) == "upstream tm did not answer within 0s (and reported no progress)"
            assert not up._inflight
        up.breaker.record_success()
        result = await up.call_tool("steps", {"n": 5})  # progress moves the deadline; the call completes
        assert not result.is_error and result.content[0].text == "5 steps"  # type: ignore[union-attr]
        result = await up.call_tool("sleep", {"seconds": 0.05})
        assert result.content[0].text == "slept"  # type: ignore[union-attr]


async def test_a_call_past_its_longest_run_says_so(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = rt.manager.add("tl", BuiltinTarget(server=build_twin(), timeout=0.3, max_call_seconds=0.3))
        assert await up.wait_ready(20), up.last_error
        with pytest.raises(UpstreamCallError) as caught:
            await up.call_tool("sleep", {"seconds": 30})
        assert str(caught.value) == "upstream tl was still running after 0s (its longest call)"


async def test_a_cancellation_from_outside_stays_a_cancellation(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = rt.manager.add("tc", BuiltinTarget(server=build_twin(), timeout=0.3, max_call_seconds=5))
        assert await up.wait_ready(20), up.last_error
        with anyio.move_on_after(0.1) as outer:  # falls before the call's own deadline
            await up.call_tool("sleep", {"seconds": 30})
        assert outer.cancelled_caught and not up._inflight
        with anyio.move_on_after(0.3) as together:  # falls with it: the outer scope still wins
            await up.call_tool("sleep", {"seconds": 30})
        assert together.cancelled_caught and not up._inflight
        result = await up.call_tool("sleep", {"seconds": 0.05})
        assert result.content[0].text == "slept"  # type: ignore[union-attr]


async def test_an_invalid_message_ends_the_waiting_calls_at_once(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = rt.manager.add("tg", BuiltinTarget(server=build_twin(), timeout=30, max_call_seconds=30))
        assert await up.wait_ready(20), up.last_error
        up._on_garbage(ValueError("nothing waits"))  # nothing in flight: nothing to end
        errors: list[UpstreamCallError] = []

        async def call() -> None:
            try:
                await up.call_tool("sleep", {"seconds": 30})
            except UpstreamCallError as e:
                errors.append(e)

        with anyio.fail_after(20):  # ended by the message, long before the call's deadline
            async with anyio.create_task_group() as tg:
                for _ in range(2):
                    tg.start_soon(call)
                for _ in range(2000):  # both calls waiting on the upstream
                    if len(up._inflight) == 2:
                        break
                    await anyio.sleep(0.01)
                up._on_garbage(ValueError("not JSON-RPC"))
        assert [str(e) for e in errors] == [
            "upstream tg answered with an invalid message (ValueError: not JSON-RPC)"] * 2
        assert not any(e.timeout for e in errors) and not up._inflight
        up.breaker.record_success()
        result = await up.call_tool("sleep", {"seconds": 0.05})
        assert result.content[0].text == "slept"  # type: ignore[union-attr]
