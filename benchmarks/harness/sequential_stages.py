"""Where the added latency of ONE sequential call goes (issue 21, added-latency goal): the same no-op tool of
the test toolbox (a stdio upstream) called N times in a row, directly and through Sentinel, over stdio and
streamable HTTP in both protocol eras, with the gateway's data directory on the real disk and on tmpfs
(/dev/shm: an fsync there costs nothing, which separates the durable audit's fsyncs from CPU). The gateway
runs under ``stage_times.py``; per run it prints the client's p50 direct and through Sentinel, and the mean
wall time per call of each pipeline stage (stages nest) and of the audit writer's commits.
Usage: python benchmarks/harness/sequential_stages.py [--calls N] [--where disk,tmpfs]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import StdioServerParameters

HARNESS = Path(__file__).resolve().parent
ROOT = HARNESS.parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
from proxy_overhead import TOKEN, TOOLBOX, http_target, sequential  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402

ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}
STAGES = ("process CPU since 1st call", "Front.call_tool", "Gateway.run", "Gateway._route",
          "Gateway._validate", "Gateway._decide", "PolicyGuard.decide", "Gateway._forward",
          "Upstream.call_tool",
          "Gateway._observe", "PolicyGuard.observe", "Gateway._done", "AuditLog.write", "CallRecord.decided",
          "CallRecord.finished", "SQLiteDatabase._commit_group")


def read_stages(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        name, rest = line[:32].strip(), line[32:].split()
        out[name] = float(rest[0])
    return out


def run(where: Path, calls: int) -> list[tuple[str, float, float, dict[str, float]]]:
    results = []
    up_port = free_port()
    upstream = subprocess.Popen([sys.executable, TOOLBOX, "--http", str(up_port)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=ENV)
    try:
        wait_http(f"http://127.0.0.1:{up_port}/mcp", proc=upstream)
        for era, mode in (("2026-07-28", "auto"), ("2025-11-25", "legacy")):
            for transport in ("stdio", "HTTP"):
                tag = f"{transport}-{era}"
                data = Path(tempfile.mkdtemp(prefix=f"stages-{tag}-", dir=where))
                stages = data / "stages.txt"
                cfg = data / "sentinel.json"
                upstreams = {"tb": {"command": sys.executable, "args": [TOOLBOX]}}
                cfg.write_text(json.dumps({"mcpServers": upstreams,
                                           "sentinel": {"data_dir": str(data / "state"), "builtins": [],
                                                        "http": {"token": TOKEN}}}))
                env = {**ENV, "STAGE_TIMES": str(stages)}
                cmd = [sys.executable, str(HARNESS / "stage_times.py"), "-c", str(cfg), "serve"]
                if transport == "stdio":
                    direct = anyio.run(sequential, StdioServerParameters(
                        command=sys.executable, args=[TOOLBOX], env=ENV), calls, mode)
                    proxied = anyio.run(sequential, StdioServerParameters(
                        command=sys.executable, args=cmd[1:], env=env), calls, mode)
                else:
                    direct_url = f"http://127.0.0.1:{up_port}/mcp"
                    direct = anyio.run(sequential, http_target(direct_url), calls, mode)
                    port = free_port()
                    gw = subprocess.Popen(cmd + ["--http", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, env=env, start_new_session=True)
                    try:
                        wait_http(f"http://127.0.0.1:{port}/healthz", proc=gw, timeout=60)
                        gw_url = f"http://127.0.0.1:{port}/mcp"
                        proxied = anyio.run(sequential, http_target(gw_url), calls, mode)
                        gw.send_signal(signal.SIGINT)
                        gw.wait(30)
                    finally:
                        stop_process(gw)
                for _ in range(50):  # the stdio gateway writes its file as it exits
                    if stages.exists():
                        break
                    anyio.run(anyio.sleep, 0.1)
                results.append((f"{transport}, {era}", statistics.median(direct), statistics.median(proxied),
                                read_stages(stages) if stages.exists() else {}))
                shutil.rmtree(data, ignore_errors=True)  # tmpfs is memory
    finally:
        stop_process(upstream)
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--where", default="disk,tmpfs")
    args = ap.parse_args()
    places = {"disk": Path(tempfile.gettempdir()), "tmpfs": Path("/dev/shm")}
    table: dict[str, list] = {}
    for name in args.where.split(","):
        table[name] = run(places[name], args.calls)
    print(f"\nOne sequential no-op call, {args.calls} calls per run (load average {os.getloadavg()[0]:.1f}); "
          "ms per call, p50 at the client, stage means at the gateway (stages nest)\n")
    cols = [(name, label) for name, rows in table.items() for label, *_ in rows]
    print(f"{'':32}" + "".join(f"{n[:5] + ' ' + lab.replace('stdio', 'sio'):>22}" for n, lab in cols))
    lines = [("client p50 direct", lambda r: r[1]), ("client p50 Sentinel", lambda r: r[2]),
             ("added p50", lambda r: r[2] - r[1])]
    lines += [(s, (lambda s: lambda r: r[3].get(s, float("nan")))(s)) for s in STAGES]
    for label, get in lines:
        print(f"{label:32}" + "".join(f"{get(r):22.3f}" for rows in table.values() for r in rows))


if __name__ == "__main__":
    main()
