"""The guard decision of two source trees, interleaved in one run (a busy shared machine moves every figure,
so only runs taken side by side compare): each round runs each tree in a child process of its own, which
builds ``hot_path.py``'s guard (the airline cancel guard, every fact present, 100k other facts) and prints, as
JSON: ``PolicyGuard.decide`` with the proof kept and not read (p50, p99, process CPU per decision), inside the
engine (SWI-Prolog's CPU clock, p50, p99), decide with the proof written in the pass and decide with the kept
proof then read (CPU, p50; the gateway's guard since 2026-12-01). The summary gives each figure's best /
median over rounds.

Usage: python benchmarks/harness/guard_ab.py --base /work/main [--rounds 3] [--decisions 1000]
       [--base-env NAME=VALUE ...]   (e.g. the same tree as base with SENTINEL_PROLOG_CALL=ctypes)
Each tree runs with its own ``.venv`` when it has one (else this interpreter), its sources first on the path.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


async def measure(n: int) -> dict[str, float]:
    """In the child: this tree's guard, measured."""
    import guard_latency as gl
    from answered_guard import answered_cancel_guard

    from sentinel_mcp.core.lazy_proof import rendered_proof

    out: dict[str, float] = {}

    async def timed(guard: Any, c: Any, prefix: str, read: bool) -> None:
        walls = []
        c0 = time.process_time()
        for _ in range(n):
            t = time.perf_counter()
            d = await guard.decide(c)
            if read:
                await rendered_proof(d.proof)
            walls.append(time.perf_counter() - t)
        out[f"{prefix}_cpu"] = (time.process_time() - c0) / n * 1e6
        out[f"{prefix}_p50"] = gl.pct(walls, 0.5) * 1e6
        out[f"{prefix}_p99"] = gl.pct(walls, 0.99) * 1e6

    with tempfile.TemporaryDirectory() as d:
        async with answered_cancel_guard(gl, Path(d)) as (guard, c):
            for _ in range(50):
                await guard.decide(c)
            await timed(guard, c, "decide", read=False)
            await guard.engine.goal("sentinel_core:sn_drop_kept_proofs")
            t = await gl.in_engine(guard, c, min(n, 300), True, lazy=True)
            out["engine_p50"], out["engine_p99"] = gl.pct(t, 0.5) * 1000, gl.pct(t, 0.99) * 1000
            await timed(guard, c, "lazy_read", read=True)
            guard.lazy_proofs = False
            await timed(guard, c, "written", read=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="the other source tree (e.g. main's checkout)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--decisions", type=int, default=1000)
    ap.add_argument("--base-env", action="append", default=[], metavar="NAME=VALUE",
                    help="set in the base's environment only")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.decisions))))
        return
    if not args.base:
        ap.error("--base is required")
    trees = {"base": Path(args.base).resolve(), "this tree": HERE.parent.parent.parent}
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for r in range(args.rounds):
        for name, tree in trees.items():
            python = tree / ".venv" / "bin" / "python"
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree), str(tree / "benchmarks")]))
            if name == "base":
                env.update(kv.split("=", 1) for kv in args.base_env)
            p = subprocess.run([str(python if python.exists() else sys.executable), str(HERE), "--child",
                                "--decisions", str(args.decisions)], env=env, cwd=tree, capture_output=True,
                               text=True)
            lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
            if not lines:
                sys.exit(f"{name}: no figures\n{p.stderr[-3000:]}")
            rows[name].append(json.loads(lines[-1]))
            print(f"round {r + 1}, {name}: " + ", ".join(f"{k} {v:.0f}" for k, v in rows[name][-1].items())
                  + f" (load {os.getloadavg()[0]:.1f})", flush=True)
    print("\nbest / median over the rounds (us):")
    for name, results in rows.items():
        keys = results[0].keys()
        figures = {k: sorted(x[k] for x in results) for k in keys}
        print(f"{name}: " + ", ".join(f"{k} {v[0]:.0f}/{v[len(v) // 2]:.0f}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
