"""What a console check waits for before its child does any work, stage by stage, and the whole check with a
child started for it (cold) against one taken warm (``policy/spare_child.py``), interleaved in one run.

Stages, in a child started as a check child is (``python -m``), stamped by the child itself: the
interpreter's start (spawn to its first line), the standard library, the MCP types (imported by the child
before this branch, shown "with-mcp"; the child reads its catalog without them now, ``catalog_tool.py``),
the checker's own modules, SWI-Prolog started (the engine and its core library), then the first check of the
shipped default+airline rulebase (its load, with the load's rehearsal in a swipl of its own, every walk).

    .venv/bin/python benchmarks/check_child_start.py [--rounds 5]

No goal, no test: the rows are for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy import spare_child
from sentinel_mcp.policy.check_process import CHILD, WALL_SECONDS, check_isolated

FILES = [RULEBASES_DIR / "default.pl", RULEBASES_DIR / "airline.pl"]
STAGES = """
import time, sys
t = [time.time()]
import asyncio, json, pathlib
t.append(time.time())
if sys.argv[2] == "with-mcp":
    import mcp.types
t.append(time.time())
import sentinel_mcp.policy.check_child, sentinel_mcp.policy.checker
from sentinel_mcp.policy.engine import shared_engine
t.append(time.time())
asyncio.run(shared_engine().goal("true"))
t.append(time.time())
from sentinel_mcp.policy.checker import check_paths
asyncio.run(check_paths(shared_engine(), [pathlib.Path(f) for f in json.loads(sys.argv[1])]))
t.append(time.time())
print(json.dumps(t), flush=True)
import os; os._exit(0)
"""
NAMES = ["interpreter start", "standard library", "mcp.types (before)", "checker modules", "SWI-Prolog start",
         "first check (load+walks)"]


def stages(mcp: str) -> list[float]:
    start = time.time()
    out = subprocess.run([sys.executable, "-c", STAGES, json.dumps([str(f) for f in FILES]), mcp],
                         capture_output=True, text=True, check=True).stdout
    t = [start, *json.loads(out)]
    return [b - a for a, b in zip(t, t[1:])]


async def _warm_spare() -> None:
    spare_child.prepare()
    while (pid := spare_child.spare_pid()) is None:
        await asyncio.sleep(0.02)
    while True:  # warm: SWI-Prolog's threads up, blocked reading its request
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        if "pipe" in wchan and len(os.listdir(f"/proc/{pid}/task")) > 1:
            return
        await asyncio.sleep(0.02)


async def checks(rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"cold child": [], "warm spare": []}
    for _ in range(rounds):
        t0 = time.perf_counter()
        await check_isolated(FILES)  # spares off: a child started for the check
        out["cold child"].append(time.perf_counter() - t0)
        spare_child.enable(CHILD, WALL_SECONDS)
        await _warm_spare()
        t0 = time.perf_counter()
        await check_isolated(FILES)
        out["warm spare"].append(time.perf_counter() - t0)
        await spare_child.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds; medians")
    for mcp in ("with-mcp", "without"):  # the child imported the MCP types before; it does not now
        runs = [stages(mcp) for _ in range(args.rounds)]
        print(f"-- stages, {mcp}")
        for i, name in enumerate(NAMES):
            print(f"stage  {name:26} {statistics.median(r[i] for r in runs) * 1000:7.0f} ms")
        before = sum(statistics.median(r[i] for r in runs) for i in range(len(NAMES) - 1))
        print(f"stage  {'start-up before any work':26} {before * 1000:7.0f} ms")
    for name, walls in asyncio.run(checks(args.rounds)).items():
        print(f"check  {name:26} {statistics.median(walls) * 1000:7.0f} ms wall "
              f"(min {min(walls) * 1000:.0f}, max {max(walls) * 1000:.0f})")


if __name__ == "__main__":
    main()
