"""Does a real Python MCP upstream spend less CPU a call when its calls arrive together? (issue 21, the
real-upstream row: through Sentinel the toolbox spends more a call than direct, and perf-upstream7 put part of
it down to calls arriving fewer at a time.)

No gateway: this process holds ``--batch`` kept-alive connections to the test toolbox (streamable HTTP,
2026-07-28 single-request ``tools/call`` of its ``noop``, raw sockets) and, round after round, sends one call
on each and reads every answer. Variants, alternated block by block: the calls of a round written back to
back (``gap 0``: as a gateway would send the calls one group commit releases if it held them to the end of
its loop turn), or with ``--gaps`` microseconds of this process's own busy work between two writes (as the
gateway sends them now: each after its share of the turn's work). Prints the upstream process's CPU a call
(user + system, all its threads) and its event loop's context switches a call, per block, and the load.

Usage: python benchmarks/harness/upstream_arrival.py [--batch 8] [--gaps 0,30,100] [--blocks 6] [--rounds 300]
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(ROOT), str(HERE), str(ROOT / "benchmarks")]
import pipeline_capacity as pc  # noqa: E402
from load import call_body, call_headers  # noqa: E402
from tests.conftest import free_port, stop_process  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def loop_switches(pid: int) -> int:
    status = Path(f"/proc/{pid}/task/{pid}/status").read_text()
    return sum(int(n) for n in re.findall(r"^(?:non)?voluntary_ctxt_switches:\s+(\d+)", status, re.M))


def read_answer(sock: socket.socket) -> None:
    buf = b""
    while True:
        data = sock.recv(65536)
        if not data:
            raise RuntimeError("the upstream closed a connection")
        buf += data
        if b"\r\n\r\n" not in buf:
            continue
        head, rest = buf.split(b"\r\n\r\n", 1)
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length"))
        if len(rest) >= length:
            if b'"isError":false' not in rest:
                raise RuntimeError(f"the no-op failed: {rest[:200]!r}")
            return


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=8, help="calls a round, one per connection")
    ap.add_argument("--gaps", default="0,30,100", help="microseconds of busy work between two writes")
    ap.add_argument("--blocks", type=int, default=6, help="blocks of each variant, alternated")
    ap.add_argument("--rounds", type=int, default=300, help="rounds a block")
    args = ap.parse_args()
    gaps = [float(g) for g in args.gaps.split(",")]
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    up = pc.start([pc.PY, pc.TOOLBOX, "--http", str(port)], url)
    try:
        body = call_body("noop").encode()
        head = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in call_headers("noop", token=None).items())
        request = (head + "\r\n").encode() + body
        socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(args.batch)]
        for s in socks:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def block(gap_us: float) -> tuple[float, float]:
            calls = args.rounds * args.batch
            cpu, switches = cpu_s(up.pid), loop_switches(up.pid)
            for _ in range(args.rounds):
                for i, s in enumerate(socks):
                    if gap_us and i:
                        spin(gap_us / 1e6)
                    s.sendall(request)
                for s in socks:
                    read_answer(s)
            return (cpu_s(up.pid) - cpu) * 1000 / calls, (loop_switches(up.pid) - switches) / calls

        block(0)  # warm up
        results: dict[float, list[tuple[float, float]]] = {g: [] for g in gaps}
        for b in range(args.blocks):
            for gap in gaps if b % 2 == 0 else gaps[::-1]:
                results[gap].append(block(gap))
    finally:
        stop_process(up)
    print(f"\nthe toolbox's CPU a call by how a round of {args.batch} calls arrives; {args.blocks} blocks of "
          f"{args.rounds} rounds each, alternated; load {os.getloadavg()[0]:.1f}")
    for gap, rows in results.items():
        cpu = [c for c, _ in rows]
        print(f"  gap {gap:5.0f} us between writes: CPU a call median {statistics.median(cpu):.3f} ms "
              f"(blocks {' '.join(f'{c:.3f}' for c in cpu)}); its loop's switches a call "
              f"{statistics.median(s for _, s in rows):.2f}")


if __name__ == "__main__":
    main()
