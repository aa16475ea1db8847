"""``max_in_flight`` per upstream: at most that many tool calls are sent to it at once, the next ones wait in
order; one that waits longer than its ``timeout`` is refused without reaching the upstream (and without
counting against the upstream's circuit breaker); a caller that gives up while waiting leaves no slot behind.
The toolbox as a real stdio upstream, the whole gateway, a real client.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)


async def _asks(ctx, params):  # noqa: ANN001 - declares elicitation: one client's calls overlap (party_turns)
    return ElicitResult(action="decline")


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda x: (x[0], x[1]))
    now = most = 0
    for _, d in edges:
        now += d
        most = max(most, now)
    return most


async def _slow(c: Client, seconds: float, out: list) -> None:
    r = await c.call_tool("tb__slow", {"seconds": seconds})
    if r.is_error:
        out.append(r.content[0].text)
        return
    start, end = (float(x) for x in r.content[0].text.split())
    out.append((start, end))


@pytest.mark.parametrize("limit", [1, 2, 3])
async def test_at_most_max_in_flight_calls_reach_the_upstream_at_once(data_dir, limit: int) -> None:
    cfg = make_config(data_dir, {"tb": toolbox_stdio(max_in_flight=limit, concurrent=True, fork=True)})
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_asks) as c:
            got: list = []
            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(_slow, c, 0.4, got)
        assert rt.manager.upstreams["tb"].waiting_for_slot == 0
    assert len(got) == 6 and all(isinstance(g, tuple) for g in got), got
    assert _most_at_once(got) == limit, got  # the limit, and used (they did overlap up to it)


async def test_without_it_every_call_goes_at_once(data_dir) -> None:
    cfg = make_config(data_dir, {"tb": toolbox_stdio(concurrent=True, fork=True)})
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_asks) as c:
            got: list = []
            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(_slow, c, 1.5, got)  # long enough to be under way together on a busy host
    assert _most_at_once(got) == 6, got


async def test_a_call_that_waits_past_its_timeout_is_refused_not_sent(data_dir) -> None:
    cfg = make_config(data_dir, {"tb": toolbox_stdio(max_in_flight=1, concurrent=True, timeout=2, fork=True)})
    async with running_gateway(cfg) as rt:
        up = rt.manager.upstreams["tb"]
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_asks) as c:
            got: list = []
            waited: dict[str, Any] = {}

            async def wait_for_a_slot() -> None:
                waited["result"] = await c.call_tool("tb__noop", {})

            async with anyio.create_task_group() as tg:
                tg.start_soon(_slow, c, 6.0, got)  # progress every 1.5 s: alive past its 2 s timeout
                await anyio.sleep(0.3)
                tg.start_soon(wait_for_a_slot)
                with anyio.fail_after(5):  # through the guard and the audit, then waiting for the slot
                    while not up.waiting_for_slot:
                        await anyio.sleep(0.01)
                lines = rt.metrics.render(rt.catalog_health).splitlines()
                assert 'sentinel_upstream_calls_in_flight{upstream="tb"} 1' in lines
                assert 'sentinel_upstream_calls_waiting{upstream="tb"} 1' in lines
            refused = waited["result"]
            assert refused.is_error
            text = refused.content[0].text
            assert "upstream tb is busy: 1 calls to it are running (its max_in_flight)" in text, text
            assert refused.meta["sentinel/error"] == "upstream_unavailable", refused.meta
            assert len(got) == 1 and isinstance(got[0], tuple)  # the running call was not disturbed
            assert up.breaker.state == "closed"  # a busy upstream is not a failing one
            assert (await c.call_tool("tb__noop", {})).content[0].text == "ok"  # a slot is free again


async def test_a_caller_that_gives_up_while_waiting_leaves_no_slot_behind(data_dir) -> None:
    cfg = make_config(data_dir, {"tb": toolbox_stdio(max_in_flight=1, concurrent=True, fork=True)})
    async with running_gateway(cfg) as rt:
        up = rt.manager.upstreams["tb"]
        async with Client(rt.front.server, mode="legacy", elicitation_callback=_asks) as c:
            first: list = []
            later: list = []
            async with anyio.create_task_group() as tg:
                tg.start_soon(_slow, c, 1.0, first)
                await anyio.sleep(0.2)
                with anyio.move_on_after(0.3):  # waits for the slot, then gives up
                    await c.call_tool("tb__slow", {"seconds": 0.1})
                with anyio.fail_after(5):  # its cancellation reaches the gateway: it stops waiting
                    while up.waiting_for_slot:
                        await anyio.sleep(0.01)
                tg.start_soon(_slow, c, 0.1, later)  # waits for the first only, then runs
            with anyio.fail_after(20):
                assert (await c.call_tool("tb__noop", {})).content[0].text == "ok"
    assert len(first) == 1 and len(later) == 1 and later[0][0] >= first[0][1] - 0.01, (first, later)


@pytest.mark.parametrize("bad", [0, -1, "2", 1.5, True, 10_001])
def test_a_bad_max_in_flight_names_the_server_and_the_field(data_dir, bad) -> None:  # noqa: ANN001
    with pytest.raises(ConfigError) as e:
        make_config(data_dir, {"tb": toolbox_stdio(max_in_flight=bad, fork=True)})
    assert "tb" in str(e.value) and "max_in_flight" in str(e.value), str(e.value)
