"""The pipeline split (issue 19) measured: the same calls through the gateway of two trees, side by side in
one run. Each tree runs in its own child process (PYTHONPATH), in-process: a no-op tool of an in-process
MCP server mounted as a built-in, the default guard, the durable audit log, the real ``mcp`` client in
memory, sequential calls, both protocol eras. Rounds alternate between the trees so load drifts hit both.

Prints per-call wall p50/p99 and CPU per call (the process's CPU time / calls: the code's own cost, which the
fsync waits in the wall time hide), through the client and the front, and of ``Gateway.execute`` alone. Goal:
the split costs nothing (after within the noise of before).
Usage: python benchmarks/pipeline_split.py [--before REF] [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


async def _child(calls: int, mode: str, data_dir: str) -> dict[str, float]:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.config import parse_config
    from sentinel_mcp.gateway.upstream import BuiltinTarget

    server = MCPServer("bench")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def noop() -> str:
        return "ok"

    config = parse_config(
        {"mcpServers": {}, "sentinel": {"data_dir": data_dir, "builtins": []}},
        source="<bench>",
        base_dir=data_dir,
    )
    async with running_gateway(config) as rt:
        up = rt.manager.add("bn", BuiltinTarget(server=server))
        assert await up.wait_ready(20), up.last_error
        rt.manager.catalog.rebuild(rt.manager.upstreams.values())
        async with Client(rt.front.server, mode=mode) as c:
            for _ in range(30):  # warm up
                await c.call_tool("bn__noop", {})
            times = []
            cpu0 = time.process_time()
            for _ in range(calls):
                t0 = time.perf_counter()
                r = await c.call_tool("bn__noop", {})
                times.append((time.perf_counter() - t0) * 1000)
            cpu = (time.process_time() - cpu0) * 1000 / calls
            assert not r.is_error, r
        # the pipeline alone (no client, no front): Gateway.execute, as A2A and the policy's fetches call it
        cpu0 = time.process_time()
        for _ in range(calls):
            out = await rt.gateway.execute("bn__noop", {}, session_id="bench/s", client="bench")
        pipeline = (time.process_time() - cpu0) * 1000 / calls
        assert not out.result.is_error, out
        # function calls per execute: what the code does, whatever the machine's load (cProfile counts them)
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        for _ in range(50):
            await rt.gateway.execute("bn__noop", {}, session_id="bench/s", client="bench")
        profile.disable()
        function_calls = pstats.Stats(profile).total_calls / 50
    times.sort()
    return {
        "p50": statistics.median(times),
        "p99": times[min(len(times) - 1, int(0.99 * len(times)))],
        "cpu": cpu,
        "pipeline": pipeline,
        "calls": function_calls,
    }


def _tree(ref: str, into: Path) -> Path:
    """``ref`` of this repository as files (git archive), to import instead of the working tree."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "sentinel_mcp", "device_tools"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def _run(tree: Path, calls: int, mode: str, tmp: Path) -> dict[str, float]:
    data = tempfile.mkdtemp(dir=tmp)
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--calls", str(calls), "--mode", mode, "--data", data],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if out.returncode != 0:
        raise SystemExit(f"child failed ({tree}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="main", help="git ref of the tree to compare with (default main)")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--mode", default="auto")
    ap.add_argument("--data")
    args = ap.parse_args()
    if args.child:
        import anyio

        print(json.dumps(anyio.run(_child, args.calls, args.mode, args.data)))
        return
    tmp = Path(tempfile.mkdtemp())
    try:
        trees = {f"before ({args.before})": _tree(args.before, tmp / "before"), "after (this tree)": ROOT}
    except (subprocess.CalledProcessError, OSError):  # not a git checkout, or no such ref: the noise floor
        print(f"no git ref {args.before!r} here: comparing this tree with itself (the noise floor)")
        trees = {"this tree (1)": ROOT, "this tree (2)": ROOT}
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for mode in ("auto", "legacy"):
            for label, tree in trees.items():
                results.setdefault((label, mode), []).append(_run(tree, args.calls, mode, tmp))
    print(
        f"\nPipeline split: {args.calls} sequential no-op calls per round, {args.rounds} rounds alternating, "
        f"in-process built-in, default guard, durable audit ({os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.1f}); medians over rounds. Goal: after's CPU per call within 5 % of before's\n"
    )
    print(
        f"{'tree':24} {'era':12} {'wall p50':>9} {'wall p99':>9} {'CPU/call':>9} {'execute CPU/call':>17} "
        f"{'function calls/execute':>23}"
    )
    for mode, era in (("auto", "2026-07-28"), ("legacy", "2025-11-25")):
        cpu = {}
        for label in trees:
            rs = results[(label, mode)]
            med = {k: statistics.median(r[k] for r in rs) for k in ("p50", "p99", "cpu", "pipeline", "calls")}
            cpu[label] = (med["cpu"], med["pipeline"])
            print(
                f"{label:24} {era:12} {med['p50']:7.2f}ms {med['p99']:7.2f}ms {med['cpu']:7.2f}ms "
                f"{med['pipeline']:15.2f}ms {med['calls']:23.0f}"
            )
        (before, before_exec), (after, after_exec) = cpu.values()
        change = (after - before) / before * 100
        change_exec = (after_exec - before_exec) / before_exec * 100
        print(
            f"{'':24} {era:12} CPU per call {change:+.1f} % (execute alone {change_exec:+.1f} %)  "
            f"{'met' if max(change, change_exec) <= 5 else 'NOT MET'}"
        )


if __name__ == "__main__":
    main()
