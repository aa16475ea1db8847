"""What the ``progressToken`` the lean stdio call asks for costs the upstream (issue 21, the upstream round
trip): the test toolbox over stdio, spoken to directly, calls of its no-op with and without a token in
``_meta`` in alternated blocks of one process; per kind the upstream's CPU a call (all its threads, from
``/proc``: clock ticks, so read the mean over many blocks) and the p50 round trip.

Usage: python benchmarks/harness/upstream_token_cpu.py [--blocks 30] [--era 2025-11-25|2026-07-28]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TOOLBOX = ROOT / "tests" / "gateway" / "toolbox_server.py"
BLOCK = 50
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        fields = Path(f"/proc/{pid}/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / TICK


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blocks", type=int, default=30)
    ap.add_argument("--era", choices=["2025-11-25", "2026-07-28"], default="2025-11-25")
    args = ap.parse_args()
    proc = subprocess.Popen([sys.executable, str(TOOLBOX)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout

    def send(message: dict[str, Any]) -> None:
        proc.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    meta: dict[str, Any] = {}
    if args.era == "2025-11-25":  # as the gateway opens it: the handshake, its client's capabilities
        capabilities = {"sampling": {}, "elicitation": {"form": {}, "url": {}},
                        "roots": {"listChanged": True}}
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": args.era, "capabilities": capabilities,
            "clientInfo": {"name": "token-cpu", "version": "1"}}})
        proc.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    else:
        meta = {"io.modelcontextprotocol/protocolVersion": args.era,
                "io.modelcontextprotocol/clientInfo": {"name": "token-cpu", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}}
    rid = 0

    def call(token: bool) -> None:
        nonlocal rid
        rid += 1
        m = {**meta, **({"progressToken": rid} if token else {})}
        params: dict[str, Any] = {"name": "noop", "arguments": {}, **({"_meta": m} if m else {})}
        send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
        if b'"result"' not in proc.stdout.readline():  # type: ignore[union-attr]
            sys.exit("the toolbox did not answer a call")

    for _ in range(300):
        call(True)
    cpu: dict[bool, list[float]] = {False: [], True: []}
    wall: dict[bool, list[float]] = {False: [], True: []}
    load = os.getloadavg()[0]
    for b in range(args.blocks):
        for token in ((False, True) if b % 2 else (True, False)):
            before = cpu_seconds(proc.pid)
            for _ in range(BLOCK):
                started = time.perf_counter()
                call(token)
                wall[token].append(time.perf_counter() - started)
            cpu[token].append((cpu_seconds(proc.pid) - before) / BLOCK)
    proc.stdin.close()
    proc.wait(10)
    print(f"the toolbox over stdio, {args.era}, {args.blocks} x {BLOCK} calls a kind, alternated; "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    for token in (False, True):
        used, p50 = statistics.mean(cpu[token]) * 1e6, statistics.median(wall[token]) * 1e6
        print(f"  progressToken {'yes' if token else 'no':3s}: upstream CPU a call {used:6.0f} us (mean of "
              f"blocks), round trip p50 {p50:6.0f} us")


if __name__ == "__main__":
    main()
