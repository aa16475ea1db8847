"""Proxy overhead: the same no-op tool called directly and through Sentinel, side by side in one run.

Prints p50/p99 latency per call (stdio and streamable HTTP, sequential) with the ratio, and calls per second
with 16 concurrent HTTP clients. Usage: python benchmarks/proxy_overhead.py [--calls N]
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

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
UPSTREAM = json.loads(os.environ.get("BENCH_UPSTREAM", "{}"))  # e.g. {"protocol": "modern"}
sys.path.insert(0, str(ROOT))
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


async def sequential(target, n: int, mode: str = "auto") -> list[float]:  # noqa: ANN001
    async with Client(target, mode=mode) as c:
        name = await _noop_name(c)
        for _ in range(20):  # warm up
            await c.call_tool(name, {})
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await c.call_tool(name, {})
            times.append((time.perf_counter() - t0) * 1000)
        return times


async def _noop_name(c: Client) -> str:
    names = [t.name for t in (await c.list_tools()).tools]
    return "noop" if "noop" in names else "tb__noop"


TOKEN = "benchmark-owner-token-0123456789"  # Sentinel's HTTP front wants a token; the upstream ignores it


def http_target(url: str):  # noqa: ANN201
    return streamable_http_client(url, http_client=httpx2.AsyncClient(
        timeout=60, headers={"Authorization": f"Bearer {TOKEN}"}))


async def throughput(url: str, clients: int, seconds: float) -> float:
    done = 0

    async def worker() -> None:
        nonlocal done
        async with Client(http_target(url), mode="auto") as c:
            name = await _noop_name(c)
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                await c.call_tool(name, {})
                done += 1

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(worker)
    return done / (time.perf_counter() - t0)


def measure(calls: int, seconds: float, clients: int = 16) -> tuple[list, float, float]:
    """Sequential latency direct and through Sentinel per transport and era, then the 16-client rates:
    ([(label, direct ms list, proxied ms list)], direct calls/s, Sentinel calls/s; rates 0 when seconds is 0).
    """
    tmp = Path(tempfile.mkdtemp())
    cfg = tmp / "sentinel.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX], **UPSTREAM}},
                "sentinel": {"data_dir": str(tmp / "state"), "builtins": [], "http": {"token": TOKEN}},
            }
        )
    )
    up_port, gw_port = free_port(), free_port()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    upstream = subprocess.Popen(
        [sys.executable, TOOLBOX, "--http", str(up_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    gateway = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{gw_port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    d_rps = p_rps = 0.0
    try:
        wait_http(f"http://127.0.0.1:{up_port}/mcp", proc=upstream)
        wait_http(f"http://127.0.0.1:{gw_port}/healthz", proc=gateway)
        direct_stdio = StdioServerParameters(command=sys.executable, args=[TOOLBOX], env=env)
        # the stdio gateway runs beside the HTTP one on the same data dir (as Claude Desktop beside `make
        # run`):
        # each writes its own audit log under <data dir>/instances/ (docs/durability.md)
        cfg_stdio = tmp / "sentinel-stdio.json"
        cfg_stdio.write_text(
            json.dumps(
                {
                    "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                    "sentinel": {"data_dir": str(tmp / "state"), "builtins": []},
                }
            )
        )
        proxied_stdio = StdioServerParameters(
            command=sys.executable, args=["-m", "sentinel_mcp", "-c", str(cfg_stdio), "serve"], env=env
        )
        rows = []
        for era, mode in (("2026-07-28", "auto"), ("2025-11-25", "legacy")):
            for label, direct, proxied in (
                ("stdio", direct_stdio, proxied_stdio),
                (
                    "streamable HTTP",
                    http_target(f"http://127.0.0.1:{up_port}/mcp"),
                    http_target(f"http://127.0.0.1:{gw_port}/mcp"),
                ),
            ):
                d = anyio.run(sequential, direct, calls, mode)
                p = anyio.run(sequential, proxied, calls, mode)
                rows.append((f"{label}, {era}", d, p))
        if seconds:
            d_rps = anyio.run(throughput, f"http://127.0.0.1:{up_port}/mcp", clients, seconds)
            p_rps = anyio.run(throughput, f"http://127.0.0.1:{gw_port}/mcp", clients, seconds)
    finally:
        stop_process(gateway)
        stop_process(upstream)
    return rows, d_rps, p_rps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    rows, d_rps, p_rps = measure(args.calls, args.seconds)
    print(
        f"\nProxy overhead, no-op tool, {args.calls} sequential calls each, both protocol eras "
        f"({os.cpu_count()} cores); added = Sentinel p50 - direct p50, goal <= 0.5 ms\n"
    )
    print(
        f"{'transport, era':28} {'direct p50':>11} {'direct p99':>11} {'sentinel p50':>13} "
        f"{'sentinel p99':>13} "
        f"{'p50 ratio':>10} {'added p50':>10}"
    )
    for label, d, p in rows:
        added = statistics.median(p) - statistics.median(d)
        print(
            f"{label:28} {statistics.median(d):9.2f}ms {pct(d, 0.99):9.2f}ms {statistics.median(p):11.2f}ms "
            f"{pct(p, 0.99):11.2f}ms {statistics.median(p) / statistics.median(d):9.2f}x {added:8.2f}ms"
            f"  {'met' if added <= 0.5 else 'NOT MET'}"
        )
    print(
        f"\n16 concurrent HTTP clients for {args.seconds:.0f}s: direct {d_rps:.0f} calls/s, "
        f"through Sentinel {p_rps:.0f} calls/s (ratio {p_rps / d_rps:.2f})"
    )


if __name__ == "__main__":
    main()
