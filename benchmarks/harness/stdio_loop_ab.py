"""The event loop's CPU per sequential stdio call, two source trees side by side (issue 21, added latency).

A busy shared machine moves a call's wall time by more than a cut of a few percent; the CPU the gateway's
event-loop thread spends on a call (``/proc/<pid>/task/<pid>/schedstat``, the thread's time on a CPU) moves
far less. Each tree's ``sentinel-mcp serve`` (its own data directory; ``TMPDIR=/dev/shm`` keeps the audit's
fsyncs out of it) forwards to a test toolbox of its own over stdio; a raw JSON-lines client (a blocking
pipe: the same tiny cost for every side) calls the no-op through each, and a direct toolbox, in blocks of
``--block`` calls, the order of the sides turned each round. Per side: p50 / p90 of the round trip, the
added p50 over direct, the loop thread's CPU per call (median over the blocks and the total), the whole
process's CPU per call and the loop thread's voluntary context switches per call.

Usage: python benchmarks/harness/stdio_loop_ab.py --base /work/main [--calls 2000] [--block 25]
       [--era modern|legacy]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from stdio_call_trace import Client  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def loop_thread(pid: int) -> tuple[int, int]:
    """The main thread's (the event loop's) ns on a CPU and voluntary switches."""
    run = int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[0])
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
    return run, int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def gateway(tree: Path, era: str) -> tuple[subprocess.Popen[bytes], Client]:
    data = Path(tempfile.mkdtemp(prefix="stdio-loop-ab-"))
    cfg = data / "sentinel.json"
    toolbox = tree / "tests" / "gateway" / "toolbox_server.py"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [str(toolbox)]}},
                               "sentinel": {"data_dir": str(data / "state"), "builtins": []}}))
    cfg.chmod(0o600)
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"], cwd=tree,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(tree)})
    return proc, Client(proc, era)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the other source tree (e.g. a worktree of main)")
    ap.add_argument("--calls", type=int, default=2000, help="calls per side")
    ap.add_argument("--block", type=int, default=25)
    ap.add_argument("--era", choices=("modern", "legacy"), default="modern")
    args = ap.parse_args()
    trees = {"base": Path(args.base).resolve(), "branch": ROOT}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    clients: dict[str, Client] = {}
    load0 = os.getloadavg()[0]
    try:
        for name, tree in trees.items():
            procs[name], clients[name] = gateway(tree, args.era)
        toolbox = ROOT / "tests" / "gateway" / "toolbox_server.py"
        procs["direct"] = subprocess.Popen([sys.executable, str(toolbox)], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                           env={**os.environ, "PYTHONWARNINGS": "ignore"})
        clients["direct"] = Client(procs["direct"], args.era)
        for client in clients.values():
            for _ in range(200):
                client.call()
        sides = ["direct", "base", "branch"]
        times: dict[str, list[float]] = {s: [] for s in sides}
        loop_cpu: dict[str, list[float]] = {s: [] for s in sides}
        switches: dict[str, int] = dict.fromkeys(sides, 0)
        cpu0 = {s: process_cpu(procs[s].pid) for s in sides}
        rounds = 0
        while len(times["branch"]) < args.calls:
            order = sides if rounds % 2 == 0 else [sides[0], *reversed(sides[1:])]
            for side in order:
                pid = procs[side].pid
                run0, vol0 = loop_thread(pid)
                for _ in range(args.block):
                    t0, t1 = clients[side].call()
                    times[side].append((t1 - t0) / 1e6)
                run1, vol1 = loop_thread(pid)
                loop_cpu[side].append((run1 - run0) / 1e3 / args.block)
                switches[side] += vol1 - vol0
            rounds += 1
        cpu = {s: (process_cpu(procs[s].pid) - cpu0[s]) / len(times[s]) * 1e3 for s in sides}
    finally:
        for proc in procs.values():
            if proc.stdin is not None:
                proc.stdin.close()
        for proc in procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()

    def q(xs: list[float], p: float) -> float:
        return sorted(xs)[int(len(xs) * p)]

    n = len(times["branch"])
    print(f"\nsequential stdio no-op calls ({args.era}), {n} a side in blocks of {args.block} (order turned "
          f"each round); load average {load0:.1f} -> {os.getloadavg()[0]:.1f}; base {trees['base']}")
    print(f"{'side':8} {'p50 ms':>8} {'p90 ms':>8} {'added p50':>10} "
          f"{'loop CPU us/call (median of blocks, mean)':>44} {'process CPU ms/call':>20} "
          f"{'loop vol. switches/call':>24}")
    direct = q(times["direct"], 0.5)
    for side in sides:
        added = "" if side == "direct" else f"{q(times[side], 0.5) - direct:+10.3f}"
        print(f"{side:8} {q(times[side], 0.5):8.3f} {q(times[side], 0.9):8.3f} {added:>10} "
              f"{statistics.median(loop_cpu[side]):30.1f} {statistics.fmean(loop_cpu[side]):13.1f} "
              f"{cpu[side]:20.3f} {switches[side] / len(times[side]):24.2f}")
    base, branch = statistics.median(loop_cpu["base"]), statistics.median(loop_cpu["branch"])
    pairs = [b - a for a, b in zip(loop_cpu["base"], loop_cpu["branch"])]
    print(f"loop CPU per call, branch - base: {branch - base:+.1f} us "
          f"({(branch - base) / base * 100:+.1f} %); "
          f"median of the paired blocks {statistics.median(pairs):+.1f} us, branch lower in "
          f"{sum(1 for d in pairs if d < 0)} of {len(pairs)} block pairs")


if __name__ == "__main__":
    main()
