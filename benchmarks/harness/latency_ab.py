"""The added latency of one sequential no-op call over stdio, two source trees interleaved in one run (a busy
shared machine moves every latency, so only calls taken side by side compare): the real ``mcp`` client
speaks to each tree's ``sentinel-mcp serve`` over stdio, which forwards to the test toolbox over stdio; the
toolbox is also called directly. Blocks of calls alternate between direct, the base tree and this tree; per
era it prints the p50 of each, the added p50 (Sentinel - direct) and the gateway process's CPU per call.

Usage: python benchmarks/harness/latency_ab.py --base /work/main [--calls 300] [--block 25]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE)]
from load import proc_cpu  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")


def _children() -> set[int]:
    me = str(os.getpid())
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me:
                out.add(int(entry))
    return out


def gateway(tree: Path, tmp: Path, name: str) -> StdioServerParameters:
    cfg = tmp / f"{name}.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        "sentinel": {"data_dir": str(tmp / name), "builtins": []},
    }))
    python = tree / ".venv" / "bin" / "python"
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)}
    return StdioServerParameters(command=str(python if python.exists() else sys.executable),
                                 args=["-m", "sentinel_mcp", "-c", str(cfg), "serve"], env=env, cwd=str(tree))


async def run(base: Path, calls: int, block: int, mode: str) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-lat-"))
    targets = {"direct": StdioServerParameters(command=sys.executable, args=[TOOLBOX]),
               "base": gateway(base, tmp, "base"), "this tree": gateway(ROOT, tmp, "this")}
    times: dict[str, list[float]] = {name: [] for name in targets}
    cpu: dict[str, float] = {}
    async with AsyncExitStack() as stack:
        clients, pids = {}, {}
        for name, params in targets.items():
            before = _children()
            clients[name] = await stack.enter_async_context(Client(params, mode=mode))  # type: ignore[arg-type]
            pids[name] = next(iter(_children() - before), None)
            tool = "noop" if name == "direct" else "tb__noop"
            for _ in range(20):  # warm up
                await clients[name].call_tool(tool, {})
        start = {name: proc_cpu(pid) if pid else 0.0 for name, pid in pids.items()}
        done = 0
        while done < calls:
            for name, client in clients.items():
                tool = "noop" if name == "direct" else "tb__noop"
                for _ in range(block):
                    t0 = time.perf_counter()
                    await client.call_tool(tool, {})
                    times[name].append((time.perf_counter() - t0) * 1000)
            done += block
        for name, pid in pids.items():
            cpu[name] = (proc_cpu(pid) - start[name]) * 1000 / done if pid else float("nan")
    return {"p50": {n: statistics.median(t) for n, t in times.items()}, "cpu": cpu}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--block", type=int, default=25)
    args = ap.parse_args()
    load = os.getloadavg()[0]
    rows = []
    for era, mode in (("2026-07-28", "auto"), ("2025-11-25", "legacy")):
        r = anyio.run(run, Path(args.base).resolve(), args.calls, args.block, mode)
        rows.append((era, r))
    print(f"\nSequential no-op over stdio (client -> sentinel stdio -> toolbox stdio), {args.calls} calls "
          f"each in blocks of {args.block}, interleaved; load average {load:.1f} -> "
          f"{os.getloadavg()[0]:.1f}\n")
    print(f"{'era':12} {'direct p50':>11} {'base p50':>9} {'added':>7} {'this p50':>9} {'added':>7} "
          f"{'base CPU/call':>14} {'this CPU/call':>14}   goal: added <= 0.5 ms")
    for era, r in rows:
        p, c = r["p50"], r["cpu"]
        print(f"{era:12} {p['direct']:11.2f} {p['base']:9.2f} {p['base'] - p['direct']:+7.2f} "
              f"{p['this tree']:9.2f} {p['this tree'] - p['direct']:+7.2f} {c['base']:14.2f} "
              f"{c['this tree']:14.2f}")


if __name__ == "__main__":
    main()
