"""What the guard's ``observe`` (after every forwarded call) costs for a tool no binding reads and no effect
names, in a conversation the decision did not load (every call of a 2026-era client without a session key):
before, it loaded and seeded the session (a store write: an fsync) only to look for a confirmation to consume;
now it reads the store once and returns. Both paths in one run, interleaved (the old path is forced).
Usage: python benchmarks/observe_cost.py [--calls N]   (goal, issue 21: the pipeline adds <= 0.5 ms p50)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp.types import CallToolResult, TextContent

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "policy")]
from policy_rig import rig  # noqa: E402


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        async with rig(Path(d) / "facts.db") as r:
            ok = CallToolResult(content=[TextContent(type="text", text="{}")])
            knowledge = r.guard.knowledge
            real = type(knowledge).is_loaded.__get__(knowledge)
            times: dict[str, list[float]] = {"now (reads the store, returns)": [],
                                             "before (loads and seeds the session)": []}
            for i in range(calls):
                for label in times:
                    knowledge.is_loaded = real if label.startswith("now") else (lambda s: True)  # type: ignore
                    call = r.port.call_of("bk__merge_bookings", {"first": "A", "second": "B"},
                                          session_id=f"{label[:3]}-{i}")
                    t = time.perf_counter()
                    await r.guard.observe(call, ok)
                    times[label].append((time.perf_counter() - t) * 1000)
    print(f"{'observe, ungoverned tool, fresh conversation':48s} {'p50 ms':>8s} {'p90 ms':>8s}  goal")
    for label, ts in times.items():
        ts.sort()
        print(f"{label:48s} {statistics.median(ts):8.3f} {ts[int(len(ts) * 0.9)]:8.3f}  "
              f"{'<= 0.5 (whole pipeline)' if label.startswith('now') else '-'}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    asyncio.run(main(ap.parse_args().calls))
