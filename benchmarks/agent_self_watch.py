"""The agent loop's self-watch (``sentinel_mcp/agent/health.py``): what scoring a step costs, side by side in
one
run, against a model step that takes a second or more. Each row: the median over N steps, and its goal.

Usage: python benchmarks/agent_self_watch.py [--steps N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from sentinel_mcp.agent.health import HealthMonitor, HealthSettings, normalise_grounds

SCREEN = "\n".join(f"e-{i:08x} TextView text='Conversation {i}' res=conversation_name" for i in range(120))
RESULT = "Alice: See you at 7? " * 150  # a tool result of ~3 KB


def median_us(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=500)
    n = parser.parse_args().steps
    observed = [normalise_grounds(RESULT) for _ in range(20)]  # a run that has seen 20 results (~60 KB)
    monitor = HealthMonitor(HealthSettings())
    for i in range(40):  # a long run's history of calls
        monitor.acted(f"s-{i}", "device__click", {"element_id": f"e-{i:08x}"})

    def grounds() -> str:
        return "\n".join([normalise_grounds("read the newest message from Alice", SCREEN), *observed])

    g = grounds()

    def screen_step() -> None:
        monitor.assess(
            snapshot="s-x",
            name="device__click",
            arguments={"element_id": "e-00000001"},
            seconds=0.5,
            grounds=g,
            tool_call=False,
        )

    def tool_step() -> None:
        monitor.assess(
            snapshot="s-x",
            name="device__contacts_search",
            arguments={"query": "Alice", "extra": {"to": "mallory@example.com", "n": 12345}},
            seconds=0.5,
            grounds=g,
            tool_call=True,
        )

    rows = [
        ("build the grounds (goal, screen, 60 KB seen)", median_us(grounds, n), "< 5000 us"),
        ("score a screen action (repetition, cycle, latency)", median_us(screen_step, n), "< 1000 us"),
        ("score a tool call (+ grounding of 3 values)", median_us(tool_step, n), "< 5000 us"),
    ]
    print(f"agent self-watch, median of {n} steps (a model step: >= 1,000,000 us)")
    print(f"{'what':<52} {'median us':>10}  goal")
    for what, us, goal in rows:
        print(f"{what:<52} {us:>10.0f}  {goal}")


if __name__ == "__main__":
    main()
