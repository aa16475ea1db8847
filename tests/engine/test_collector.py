"""The garbage collector while the gateway serves (``app/collector.py``): start-up's objects frozen, the young
generation collected after ``YOUNG_THRESHOLD`` allocations, the process's own settings back afterwards."""

from __future__ import annotations

import gc

from sentinel_mcp.app.collector import YOUNG_THRESHOLD, serving_collector
from sentinel_mcp.app.runtime import running_gateway
from tests.gateway.helpers import make_config


def test_serving_raises_the_young_threshold_and_gives_it_back() -> None:
    before = gc.get_threshold()
    with serving_collector():
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    gc.unfreeze()


async def test_a_running_gateway_serves_under_it(data_dir) -> None:
    before = gc.get_threshold()
    async with running_gateway(make_config(data_dir, servers={}, builtins=[])):
        assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD)
    assert gc.get_threshold() == before
    gc.unfreeze()


def test_cyclic_garbage_is_still_collected() -> None:
    class Node:
        def __init__(self) -> None:
            self.other: object = self

    with serving_collector():
        gc.collect()
        for _ in range(5 * YOUNG_THRESHOLD):
            Node()  # each a cycle (the instance and its attributes): freed only by the collector
        # the collector ran on the way, every YOUNG_THRESHOLD allocations: what is left is at most that many
        assert gc.collect() <= 2 * YOUNG_THRESHOLD
    gc.unfreeze()
