"""What a rulebase load costs with its rehearsal in a child SWI-Prolog (policy/load_rehearsal.py) and without,
interleaved in one run: wall time, this process's CPU and the children's CPU per load (a start-up and every
hot reload pay one load). Loads are the shipped default+airline pair and the embedded default's five files.

    .venv/bin/python benchmarks/rulebase_load.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import time
from pathlib import Path

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy import load_rehearsal, rulebase
from sentinel_mcp.policy.engine import shared_engine

SETS = {
    "default+airline": ["default.pl", "airline.pl"],
    "embedded default (5 files)": ["default.pl", "airline.pl", "device.pl", "sensors.pl", "swarm.pl"],
}
GOAL_EXTRA_CPU = 0.15  # CPU seconds the rehearsal may add to one load (start-up, hot reload); CPU, not wall
# time, is the figure that holds on a loaded machine


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


async def _once(files: list[Path], rehearse: bool) -> tuple[float, float, float]:
    real = load_rehearsal.rehearse

    async def skipped(
        fs: list[Path], seconds: float = 0.0, *, key: str | None = None
    ) -> dict[str, list[object]]:
        return {"errors": [], "warnings": []}

    if not rehearse:
        load_rehearsal.rehearse = skipped  # type: ignore[assignment]
    load_rehearsal._done.clear()  # a start-up, or a reload of changed files: never a remembered rehearsal
    try:
        c0, k0, t0 = *_cpu(), time.perf_counter()
        rb = await rulebase.load_rulebase(shared_engine(), files)
        t1, (c1, k1) = time.perf_counter(), _cpu()
    finally:
        load_rehearsal.rehearse = real  # type: ignore[assignment]
    await shared_engine().unload(rb.module)
    return t1 - t0, c1 - c0, k1 - k0


async def main(rounds: int) -> None:
    print(f"load average {os.getloadavg()[0]:.2f}; {rounds} loads each, interleaved")
    for name, names in SETS.items():
        files = [RULEBASES_DIR / n for n in names]
        await _once(files, True)  # warm: the engine's first load, the page cache
        got: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
        for _ in range(rounds):
            for rehearse in (False, True):
                got[rehearse].append(await _once(files, rehearse))
        med = {k: [sorted(x[i] for x in v)[len(v) // 2] for i in range(3)] for k, v in got.items()}
        extra = (med[True][1] + med[True][2]) - (med[False][1] + med[False][2])
        extra_wall = med[True][0] - med[False][0]
        for k, label in ((False, "without rehearsal"), (True, "with rehearsal")):
            wall, cpu, kids = med[k]
            print(f"{name:28} {label:18} wall {wall * 1000:7.1f} ms  cpu here {cpu * 1000:6.1f} ms  "
                  f"cpu children {kids * 1000:6.1f} ms")
        verdict = "ok" if extra <= GOAL_EXTRA_CPU else "OVER"
        print(f"{name:28} rehearsal adds {extra * 1000:.1f} ms CPU ({extra_wall * 1000:.1f} ms wall) per "
              f"load (goal <= {GOAL_EXTRA_CPU * 1000:.0f} ms CPU): {verdict}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    asyncio.run(main(ap.parse_args().rounds))
