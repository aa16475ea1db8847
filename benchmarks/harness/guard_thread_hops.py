"""Does a guarded call hop to another thread of the gateway? (issue 21, added latency; branch perf-hops8.)

Two gateways over stdio, each forwarding to a test toolbox of its own: one with the fail-safe default guard
(no rulebase: the benchmark rows' config), one with the shipped ``rulebases/default.pl`` (every call decided
by SWI-Prolog). A raw JSON-lines client (2026-07-28) makes ``--calls`` sequential no-op calls through each;
per gateway thread it prints the voluntary context switches and the CPU (``schedstat``) a call. A thread that
a call hands work to (the Prolog engine thread, the audit writer) shows ~2 switches a call (its wake-up and
its sleep); the loop's own are its sleeps for the client's line and the upstream's answer.

Usage: TMPDIR=/dev/shm python benchmarks/harness/guard_thread_hops.py [--calls 1000]
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

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")


def threads(pid: int) -> dict[str, tuple[int, int, int, int]]:
    """Per thread id: voluntary switches, ns on a CPU, user and system clock ticks (which of the two tells a
    commit's ``fdatasync`` from Prolog's work)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
            run = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[tid] = (int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0]), run, int(stat[11]),
                    int(stat[12]))
    return out


def gateway(rulebase: bool) -> tuple[subprocess.Popen[bytes], Client]:
    data = Path(tempfile.mkdtemp(prefix="guard-hops-"))
    cfg = data / "sentinel.json"
    sentinel: dict[str, object] = {"data_dir": str(data / "state"), "builtins": []}
    if rulebase:
        sentinel["rulebases"] = [str(ROOT / "rulebases" / "default.pl")]
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": sentinel}))
    cfg.chmod(0o600)
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)})
    return proc, Client(proc, "modern")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=1000)
    args = ap.parse_args()
    sides = {"default guard (no rulebase)": gateway(False), "rulebases/default.pl (Prolog)": gateway(True)}
    load0 = os.getloadavg()[0]
    results = {}
    try:
        for _, client in sides.values():
            for _ in range(200):
                client.call()
        for name, (proc, client) in sides.items():
            before, times = threads(proc.pid), []
            for _ in range(args.calls):
                t0, t1 = client.call()
                times.append((t1 - t0) / 1e3)
            results[name] = (proc.pid, before, threads(proc.pid), statistics.median(times))
    finally:
        for proc, _ in sides.values():
            if proc.stdin is not None:
                proc.stdin.close()
        for proc, _ in sides.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    print(f"\n{args.calls} sequential stdio no-op calls a gateway (2026-07-28); load average {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}; data under {tempfile.gettempdir()}")
    for name, (pid, before, after, p50) in results.items():
        print(f"{name}: round trip p50 {p50:.0f} us; per thread: voluntary switches a call, CPU us a call, "
              f"user / system ticks in all")
        for tid in sorted(after, key=int):
            if tid in before:
                label = "loop" if tid == str(pid) else "other"
                print(f"  {tid:>8} {label:6} {(after[tid][0] - before[tid][0]) / args.calls:6.2f} "
                      f"{(after[tid][1] - before[tid][1]) / args.calls / 1e3:8.1f} "
                      f"{after[tid][2] - before[tid][2]:6} / {after[tid][3] - before[tid][3]}")


if __name__ == "__main__":
    main()
