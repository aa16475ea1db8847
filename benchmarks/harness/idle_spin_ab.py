"""Does a process's sleep between its bursts cost CPU, and would the gateway's loop gain by polling a while
before it sleeps? (issue 21, added latency; branch perf-hops8; an experiment, not a product change.)

Part 1 (``gap``): the test toolbox driven directly over stdio (2025-11-25 handshake and a ``progressToken``:
what the gateway sends it), blocks of 50 calls alternated, the client pausing between calls: not at all,
sleeping 0.5 / 1.5 ms, or spinning 1.5 ms. Per kind the toolbox's CPU a call (all its threads,
``schedstat``) and the round trip. A sequential call through Sentinel gives its upstream the same kind of
gap (the gateway's ~1 ms of work and the client between two calls) and the gateway a ~0.7 ms sleep for the
upstream's answer.

Part 2 (``spin``): gateways whose event loop, before it blocks in ``epoll``, polls without blocking for up to
``--spin`` us (each side's value; 0 = as shipped), each with its own toolbox, and two direct toolboxes (one
spoken to in 2026-07-28 as the client speaks, one as the gateway speaks to its upstream: 2025-11-25 with a
``progressToken``); a raw JSON-lines client (2026-07-28) alternates blocks of 25 calls. Per side: p50 / p90,
added p50, the gateway's CPU a call (all its threads), its toolbox's CPU a call, the loop's voluntary
switches a call.

Usage: TMPDIR=/dev/shm python benchmarks/harness/idle_spin_ab.py [gap|spin] [--calls 1500] [--spin 0,300,1500]
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
from stdio_call_trace import Client, toolbox_under  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")


def serve(spin_us: int, argv: list[str]) -> None:
    """``sentinel-mcp`` with the loop's selector polling up to ``spin_us`` before it blocks."""
    import selectors

    select = selectors.EpollSelector.select
    budget = spin_us / 1e6

    def spinning_select(self: Any, timeout: float | None = None) -> Any:
        if timeout is not None and timeout <= 0 or budget <= 0:
            return select(self, timeout)
        end = time.monotonic() + (budget if timeout is None else min(budget, timeout))
        while True:
            ready = select(self, 0)
            if ready:
                return ready
            now = time.monotonic()
            if now >= end:
                break
        left = None if timeout is None else max(0.0, timeout - budget)
        return select(self, left)

    selectors.EpollSelector.select = spinning_select  # type: ignore[method-assign]
    sys.argv = ["sentinel-mcp", *argv]
    runpy.run_module("sentinel_mcp", run_name="__main__")


def the_toolbox(gateway_pid: int) -> int:
    """The toolbox itself, not its reaper (whose command line names it too)."""
    return next(p for p in toolbox_under(gateway_pid)
                if b"upstream_reaper" not in Path(f"/proc/{p}/cmdline").read_bytes())


def run_ns(pid: int) -> int:
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
        except OSError:
            pass
    return total


def loop_switches(pid: int) -> int:
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
    return int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])


class Handshake:
    """The toolbox over stdio, spoken to as the gateway speaks to it."""

    def __init__(self) -> None:
        self.p = subprocess.Popen([sys.executable, TOOLBOX], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"sampling": {}, "roots": {"listChanged": True}},
            "clientInfo": {"name": "gap", "version": "1"}}})
        assert self.p.stdout is not None
        self.p.stdout.readline()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.rid = 1 << 40

    def send(self, message: dict[str, Any]) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.p.stdin.flush()

    def call(self) -> None:
        self.rid += 1
        self.send({"jsonrpc": "2.0", "id": self.rid, "method": "tools/call", "params": {
            "name": "noop", "arguments": {}, "_meta": {"progressToken": self.rid}}})
        assert self.p.stdout is not None
        if b'"result"' not in self.p.stdout.readline():
            sys.exit("the toolbox did not answer")


def spin_for(us: float) -> None:
    end = time.perf_counter() + us / 1e6
    while time.perf_counter() < end:
        pass


def gap(rounds: int) -> None:
    kinds = {"no pause": lambda: None, "sleep 0.5 ms": lambda: time.sleep(0.0005),
             "sleep 1.5 ms": lambda: time.sleep(0.0015), "spin 1.5 ms": lambda: spin_for(1500)}
    boxes = {k: Handshake() for k in kinds}
    for box in boxes.values():
        for _ in range(200):
            box.call()
    cpu: dict[str, list[float]] = {k: [] for k in kinds}
    wall: dict[str, list[float]] = {k: [] for k in kinds}
    load0 = os.getloadavg()[0]
    names = list(kinds)
    for r in range(rounds):
        for k in names if r % 2 == 0 else names[::-1]:
            box, pause = boxes[k], kinds[k]
            before = run_ns(box.p.pid)
            for _ in range(50):
                pause()
                t = time.perf_counter()
                box.call()
                wall[k].append(time.perf_counter() - t)
            cpu[k].append((run_ns(box.p.pid) - before) / 50e3)
    for box in boxes.values():
        assert box.p.stdin is not None
        box.p.stdin.close()
        box.p.wait(20)
    print(f"\nthe toolbox driven directly (2025-11-25 + progressToken), {rounds} x 50 calls a kind, "
          f"alternated; load average {load0:.1f} -> {os.getloadavg()[0]:.1f}")
    for k in names:
        print(f"  {k:14} toolbox CPU a call (median of blocks) {statistics.median(cpu[k]):7.1f} us, "
              f"round trip p50 {statistics.median(wall[k]) * 1e6:7.1f} us")


def gateway(spin_us: int) -> tuple[subprocess.Popen[bytes], Client]:
    data = Path(tempfile.mkdtemp(prefix="idle-spin-"))
    cfg = data / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(data / "state"), "builtins": []}}))
    cfg.chmod(0o600)
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(spin_us), "-c", str(cfg), "serve"],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONPATH": str(ROOT)})
    return proc, Client(proc, "modern")


def spin(calls: int, block: int, spins: list[int]) -> None:
    procs: dict[str, subprocess.Popen[bytes]] = {}
    clients: dict[str, Client] = {}
    # "direct 2025": the toolbox spoken to as the gateway speaks to it (handshake, token), for its CPU a call
    sides = ["direct", "direct 2025", *(f"spin {s}" for s in spins)]
    load0 = os.getloadavg()[0]
    try:
        for s in spins:
            procs[f"spin {s}"], clients[f"spin {s}"] = gateway(s)
        procs["direct"] = subprocess.Popen([sys.executable, TOOLBOX], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        clients["direct"] = Client(procs["direct"], "modern")
        handshake = Handshake()
        procs["direct 2025"] = handshake.p
        for client in [*clients.values(), handshake]:
            for _ in range(200):
                client.call()
        toolbox = {"direct": procs["direct"].pid, "direct 2025": handshake.p.pid,
                   **{s: the_toolbox(procs[s].pid) for s in sides[2:]}}
        times: dict[str, list[float]] = {s: [] for s in sides}
        gw_cpu: dict[str, list[float]] = {s: [] for s in sides}
        up_cpu: dict[str, list[float]] = {s: [] for s in sides}
        switches = dict.fromkeys(sides, 0)
        rounds = 0
        while len(times[sides[-1]]) < calls:
            for side in sides if rounds % 2 == 0 else [sides[0], *reversed(sides[1:])]:
                pid = procs[side].pid
                g0, u0, v0 = run_ns(pid), run_ns(toolbox[side]), loop_switches(pid)
                for _ in range(block):
                    if side == "direct 2025":
                        t0 = time.perf_counter_ns()
                        handshake.call()
                        t1 = time.perf_counter_ns()
                    else:
                        t0, t1 = clients[side].call()
                    times[side].append((t1 - t0) / 1e6)
                gw_cpu[side].append((run_ns(pid) - g0) / 1e3 / block)
                up_cpu[side].append((run_ns(toolbox[side]) - u0) / 1e3 / block)
                switches[side] += loop_switches(pid) - v0
            rounds += 1
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

    direct = q(times["direct"], 0.5)
    print(f"\nsequential stdio no-op calls (2026-07-28), {len(times[sides[-1]])} a side in blocks of "
          f"{block}; load average {load0:.1f} -> {os.getloadavg()[0]:.1f}; "
          f"data under {tempfile.gettempdir()}")
    print(f"{'side':10} {'p50 ms':>8} {'p90 ms':>8} {'added p50':>10} {'gateway CPU us/call':>20} "
          f"{'toolbox CPU us/call':>20} {'loop vol. switches/call':>24}")
    for side in sides:
        added = "" if side.startswith("direct") else f"{q(times[side], 0.5) - direct:+10.3f}"
        gw = "" if side.startswith("direct") else f"{statistics.median(gw_cpu[side]):20.1f}"
        print(f"{side:10} {q(times[side], 0.5):8.3f} {q(times[side], 0.9):8.3f} {added:>10} {gw:>20} "
              f"{statistics.median(up_cpu[side]):20.1f} {switches[side] / len(times[side]):24.2f}")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), sys.argv[3:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=("gap", "spin"), nargs="?", default="spin")
    ap.add_argument("--calls", type=int, default=1500)
    ap.add_argument("--block", type=int, default=25)
    ap.add_argument("--rounds", type=int, default=30, help="gap: rounds of 50 calls a kind")
    ap.add_argument("--spin", default="0,300,1500", help="spin: each gateway's polling budget, us")
    args = ap.parse_args()
    if args.part == "gap":
        gap(args.rounds)
    else:
        spin(args.calls, args.block, [int(s) for s in args.spin.split(",")])


if __name__ == "__main__":
    main()
