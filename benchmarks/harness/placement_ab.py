"""Is the sequential stdio call's loop CPU inflated by sharing a core with the client and the upstream?
(issue 21, added latency; branch perf-hops8.)

A sequential call passes three processes in a chain (client -> gateway -> toolbox and back); each pipe write
wakes its reader synchronously, and the scheduler likes to put the woken reader on the writer's CPU, so all
three take turns on one core and evict each other's caches. This runs, side by side in one process, blocks
of ``--block`` calls alternated (order turned each round):

- ``direct``: the raw JSON-lines client and a toolbox, no affinity;
- ``free``: the same client through a gateway (its own toolbox), no affinity: the benchmark rows' shape;
- ``split``: the same tree's gateway pinned to CPU 1, its toolbox and the client (during its blocks) to CPU 0:
  the gateway's loop never shares its core with the chain (neighbours still may).

Per side: p50 / p90 of the round trip, the added p50, the loop thread's CPU per call (``schedstat``'s time
on a CPU; median of the blocks), its time waiting for a CPU per call (``schedstat``'s run-queue time), its
voluntary / involuntary switches per call, and the toolbox's CPU per call (all its threads; on ``direct``
the toolbox is the side's only process, so its "loop" columns are the toolbox's main thread). Not a product
change (no product pins itself): it tells whether the loop's CPU a sequential call, and its toolbox's, are
inflated by taking turns with the rest of the chain on one core (cache interference).

Usage: TMPDIR=/dev/shm python benchmarks/harness/placement_ab.py [--calls 2000] [--block 25] [--era modern]
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

TOOLBOX = ROOT / "tests" / "gateway" / "toolbox_server.py"
ALL = frozenset(range(os.cpu_count() or 1))


def loop_thread(pid: int) -> tuple[int, int, int, int]:
    """The main thread's (the event loop's) ns on a CPU, ns waiting for one, voluntary and involuntary
    switches."""
    run, wait = (int(x) for x in Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[:2])
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
    vol = int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])
    inv = int(status.split("\nnonvoluntary_ctxt_switches:")[1].split()[0])
    return run, wait, vol, inv


def process_run(pid: int) -> int:
    """ns on a CPU of all of ``pid``'s threads (those alive now)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except OSError:
            pass
    return total


def children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                    out.append(int(entry))
            except (OSError, IndexError):
                pass
    return out


def gateway(era: str, pin: int | None, upstream_pin: int | None) -> tuple[subprocess.Popen[bytes], Client]:
    data = Path(tempfile.mkdtemp(prefix="placement-ab-"))
    cfg = data / "sentinel.json"
    up = [sys.executable, str(TOOLBOX)]
    if upstream_pin is not None:
        up = ["taskset", "-c", str(upstream_pin), *up]
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": up[0], "args": up[1:]}},
                               "sentinel": {"data_dir": str(data / "state"), "builtins": []}}))
    cfg.chmod(0o600)
    cmd = [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"]
    if pin is not None:
        cmd = ["taskset", "-c", str(pin), *cmd]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)})
    return proc, Client(proc, era)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000, help="calls per side")
    ap.add_argument("--block", type=int, default=25)
    ap.add_argument("--era", choices=("modern", "legacy"), default="modern")
    args = ap.parse_args()
    if len(ALL) < 2:
        sys.exit("needs two CPUs")
    procs: dict[str, subprocess.Popen[bytes]] = {}
    clients: dict[str, Client] = {}
    load0 = os.getloadavg()[0]
    try:
        procs["free"], clients["free"] = gateway(args.era, None, None)
        procs["split"], clients["split"] = gateway(args.era, 1, 0)
        procs["direct"] = subprocess.Popen([sys.executable, str(TOOLBOX)], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                           env={**os.environ, "PYTHONWARNINGS": "ignore"})
        clients["direct"] = Client(procs["direct"], args.era)
        for client in clients.values():
            for _ in range(200):
                client.call()
        # each side's toolbox: the gateway's runs under its reaper (a child of the gateway)
        toolboxes = {"direct": procs["direct"].pid,
                     **{s: children(children(procs[s].pid)[0])[0] for s in ("free", "split")}}
        sides = ["direct", "free", "split"]
        times: dict[str, list[float]] = {s: [] for s in sides}
        loop_cpu: dict[str, list[float]] = {s: [] for s in sides}
        loop_wait: dict[str, list[float]] = {s: [] for s in sides}
        upstream_cpu: dict[str, list[float]] = {s: [] for s in sides}
        vols: dict[str, int] = dict.fromkeys(sides, 0)
        invs: dict[str, int] = dict.fromkeys(sides, 0)
        rounds = 0
        while len(times["split"]) < args.calls:
            order = sides if rounds % 2 == 0 else [sides[0], *reversed(sides[1:])]
            for side in order:
                os.sched_setaffinity(0, {0} if side == "split" else ALL)
                pid = procs[side].pid
                run0, wait0, vol0, inv0 = loop_thread(pid)
                up0 = process_run(toolboxes[side])
                for _ in range(args.block):
                    t0, t1 = clients[side].call()
                    times[side].append((t1 - t0) / 1e6)
                run1, wait1, vol1, inv1 = loop_thread(pid)
                upstream_cpu[side].append((process_run(toolboxes[side]) - up0) / 1e3 / args.block)
                loop_cpu[side].append((run1 - run0) / 1e3 / args.block)
                loop_wait[side].append((wait1 - wait0) / 1e3 / args.block)
                vols[side] += vol1 - vol0
                invs[side] += inv1 - inv0
            rounds += 1
        os.sched_setaffinity(0, ALL)
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

    n = len(times["split"])
    print(f"\nsequential stdio no-op calls ({args.era}), {n} a side in blocks of {args.block} (order turned "
          f"each round); load average {load0:.1f} -> {os.getloadavg()[0]:.1f}; "
          f"data under {tempfile.gettempdir()}")
    print(f"{'side':8} {'p50 ms':>8} {'p90 ms':>8} {'added p50':>10} {'loop CPU us/call':>17} "
          f"{'loop waits for a CPU us/call':>29} {'loop vol / invol switches a call':>33} "
          f"{'toolbox CPU us/call':>20}")
    direct = q(times["direct"], 0.5)
    for side in sides:
        added = "" if side == "direct" else f"{q(times[side], 0.5) - direct:+10.3f}"
        print(f"{side:8} {q(times[side], 0.5):8.3f} {q(times[side], 0.9):8.3f} {added:>10} "
              f"{statistics.median(loop_cpu[side]):17.1f} {statistics.median(loop_wait[side]):29.1f} "
              f"{vols[side] / n:16.2f} / {invs[side] / n:5.2f} {statistics.median(upstream_cpu[side]):20.1f}")
    free, split = statistics.median(loop_cpu["free"]), statistics.median(loop_cpu["split"])
    pairs = [b - a for a, b in zip(loop_cpu["free"], loop_cpu["split"])]
    print(f"gateway loop CPU per call, split - free: {split - free:+.1f} us "
          f"({(split - free) / free * 100:+.1f} %); paired blocks' median "
          f"{statistics.median(pairs):+.1f} us, split lower in {sum(1 for d in pairs if d < 0)} "
          f"of {len(pairs)}")


if __name__ == "__main__":
    main()
