"""Proxy overhead: the same no-op tool called directly and through Sentinel, side by side in one run.

Prints p50/p99 latency per call (stdio and streamable HTTP, sequential) with the ratio, and calls per second
with 16 concurrent HTTP clients. Usage: python benchmarks/proxy_overhead.py [--calls N]

Fair by construction (2026-12-04): per era, every target's client is open at once and blocks of
``BLOCK`` calls alternate between them, so a neighbour's load moves direct and Sentinel alike (the rows were
measured all-direct, then all-Sentinel); and the HTTP row has the same server behind both sides: Sentinel
forwards to the very toolbox HTTP server the direct side calls, in the client's era (``"protocol":
"modern"`` / ``"legacy"``). The row ``..., stdio upstream`` is the earlier shape (Sentinel's HTTP front in
front of a toolbox process over stdio, whose SDK stdio server hands each message to a reader and a writer
thread, ~14 voluntary context switches a call against ~3 over HTTP: a cost only Sentinel's side paid).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


BLOCK = 10  # calls per target in turn (alternated)
SYNC_PROCESS = ', audit sync "process"'  # the label's tail of a row with sentinel.audit.sync "process"


async def alternated(targets: dict, n: int, mode: str) -> dict[str, list[float]]:  # noqa: ANN001
    """``n`` sequential calls of the no-op per target (a client factory or stdio parameters), in alternating
    blocks of ``BLOCK``, every client open throughout: {label: ms per call}."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        clients, names = {}, {}
        for label, target in targets.items():
            made = target() if callable(target) else target
            clients[label] = await stack.enter_async_context(Client(made, mode=mode))
            names[label] = await _noop_name(clients[label])
            for _ in range(20):  # warm up
                await clients[label].call_tool(names[label], {})
        times: dict[str, list[float]] = {label: [] for label in targets}
        while min(len(t) for t in times.values()) < n:
            for label, c in clients.items():
                for _ in range(BLOCK):
                    t0 = time.perf_counter()
                    await c.call_tool(names[label], {})
                    times[label].append((time.perf_counter() - t0) * 1000)
        return times


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


PROCESS = {"audit": {"sync": "process"}}  # sentinel.audit.sync: each commit in the OS cache, no fsync


def _sentinel_http(tmp: Path, name: str, upstream: dict, env: dict,
                   data: Path | None = None, extra: dict | None = None) -> tuple[subprocess.Popen, int]:
    cfg = tmp / f"{name}.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": upstream}, "sentinel": {
        "data_dir": str(data or tmp / "state"), "builtins": [], "http": {"token": TOKEN}, **(extra or {})}}))
    port = free_port()
    with open(tmp / f"{name}.stderr", "ab") as err:  # read back if it exits before it answers
        proc = subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True)
    return proc, port


def _started(tmp: Path, name: str, front: tuple[subprocess.Popen, int],
             again) -> tuple[subprocess.Popen, int]:
    """``front`` once it answers ``/healthz``; a front that exits first has its stderr's tail printed and is
    started once more on a new port (a port taken between ``free_port()`` and the bind is the usual cause)."""
    for attempt in (1, 2):
        proc, port = front
        try:
            wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=90)
            return front
        except RuntimeError:
            tail = (tmp / f"{name}.stderr").read_text(errors="replace").strip().splitlines()[-8:]
            print(f"  gateway {name} exited with {proc.returncode} before it answered; its stderr ends:",
                  *(f"    {line}" for line in tail), sep="\n", file=sys.stderr)
            if attempt == 2:
                raise
            front = again()
    raise AssertionError("unreachable")


def measure(calls: int, seconds: float, clients: int = 16, tmpfs: bool = False,
            process: bool = False) -> tuple[list, float, float]:
    """Sequential latency direct and through Sentinel per transport and era, alternated (module docstring),
    then the 16-client rates: ([(label, direct ms list, proxied ms list)], direct calls/s, Sentinel calls/s;
    rates 0 when seconds is 0). ``tmpfs``: beside them, in the same alternation, the stdio and HTTP gateways
    again with their data dir on ``/dev/shm`` (rows labelled ``..., data dir on tmpfs``): the pipeline's CPU
    and hops without the disk's syncs (the same commits, the same ``fdatasync`` calls, which tmpfs answers at
    once). ``process``: beside them, the stdio gateway and the HTTP fronts (both upstream shapes) on disk
    with ``sentinel.audit.sync = "process"`` (rows labelled ``..., audit sync "process"``): the same commits
    without their fsync (``config_audit.py``).
    """
    tmp = Path(tempfile.mkdtemp())
    shm = Path(tempfile.mkdtemp(prefix="sentinel-bench-", dir="/dev/shm")) if tmpfs else None
    up_port = free_port()
    up_url = f"http://127.0.0.1:{up_port}/mcp"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    upstream = subprocess.Popen(
        [sys.executable, TOOLBOX, "--http", str(up_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    # Sentinel's HTTP fronts, one data dir (each writes its own audit log under <data dir>/instances/,
    # docs/durability.md): before a toolbox process over stdio (the earlier shape), and before the toolbox's
    # HTTP server the direct side calls, in each era
    stdio_upstream = {"command": sys.executable, "args": [TOOLBOX], **UPSTREAM}
    starts = {"stdio": ("sentinel", stdio_upstream, None, None),
              "modern": ("sentinel-modern", {"url": up_url, "protocol": "modern"}, None, None),
              "legacy": ("sentinel-legacy", {"url": up_url, "protocol": "legacy"}, None, None)}
    if shm is not None:
        starts |= {f"{p} tmpfs": (f"sentinel-{p}-tmpfs", {"url": up_url, "protocol": p}, shm / "state", None)
                   for p in ("modern", "legacy")}
    if process:  # a data dir of their own on the same disk: the stdio-upstream front and both eras' fronts
        starts |= {f"{p} process": (f"sentinel-{p}-process", {"url": up_url, "protocol": p},
                                    tmp / "state-process", PROCESS) for p in ("modern", "legacy")}
        starts["stdio process"] = ("sentinel-process", stdio_upstream, tmp / "state-process", PROCESS)
    fronts = {k: _sentinel_http(tmp, name, up, env, data, extra)
              for k, (name, up, data, extra) in starts.items()}
    gw_port = fronts["stdio"][1]
    d_rps = p_rps = 0.0
    try:
        wait_http(up_url, proc=upstream)
        for k, (name, up, data, extra) in starts.items():
            fronts[k] = _started(tmp, name, fronts[k], lambda name=name, up=up, data=data, extra=extra:
                                 _sentinel_http(tmp, name, up, env, data, extra))
        direct_stdio = StdioServerParameters(command=sys.executable, args=[TOOLBOX], env=env)
        # the stdio gateway beside the HTTP ones on the same data dir (as Claude Desktop beside `make run`)
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
        targets: dict = {}
        if shm is not None:  # the same stdio gateway with its data dir on tmpfs
            cfg_shm = tmp / "sentinel-stdio-tmpfs.json"
            toolbox = {"command": sys.executable, "args": [TOOLBOX]}
            cfg_shm.write_text(json.dumps({"mcpServers": {"tb": toolbox},
                                           "sentinel": {"data_dir": str(shm / "state"), "builtins": []}}))
            targets["sentinel stdio, tmpfs"] = StdioServerParameters(
                command=sys.executable, args=["-m", "sentinel_mcp", "-c", str(cfg_shm), "serve"], env=env)
        if process:  # the same stdio gateway, its audit committed without an fsync
            cfg_process = tmp / "sentinel-stdio-process.json"
            toolbox = {"command": sys.executable, "args": [TOOLBOX]}
            cfg_process.write_text(json.dumps({"mcpServers": {"tb": toolbox}, "sentinel": {
                "data_dir": str(tmp / "state-process"), "builtins": [], **PROCESS}}))
            targets["sentinel stdio, process"] = StdioServerParameters(
                command=sys.executable, args=["-m", "sentinel_mcp", "-c", str(cfg_process), "serve"], env=env)
        rows = []
        for era, mode, protocol in (("2026-07-28", "auto", "modern"), ("2025-11-25", "legacy", "legacy")):
            if shm is not None:
                targets["sentinel http, tmpfs"] = (
                    lambda p=protocol: http_target(f"http://127.0.0.1:{fronts[f'{p} tmpfs'][1]}/mcp"))
            if process:
                targets["sentinel http, process"] = (
                    lambda p=protocol: http_target(f"http://127.0.0.1:{fronts[f'{p} process'][1]}/mcp"))
                targets["sentinel http, stdio upstream, process"] = (
                    lambda: http_target(f"http://127.0.0.1:{fronts['stdio process'][1]}/mcp"))
            times = anyio.run(alternated, {
                "direct stdio": direct_stdio, "sentinel stdio": proxied_stdio,
                "direct http": lambda: http_target(up_url),
                "sentinel http": lambda p=protocol: http_target(f"http://127.0.0.1:{fronts[p][1]}/mcp"),
                "sentinel http, stdio upstream": lambda: http_target(f"http://127.0.0.1:{gw_port}/mcp"),
                **targets,
            }, calls, mode)
            rows += [(f"stdio, {era}", times["direct stdio"], times["sentinel stdio"]),
                     (f"streamable HTTP, {era}", times["direct http"], times["sentinel http"]),
                     (f"streamable HTTP, {era}, stdio upstream", times["direct http"],
                      times["sentinel http, stdio upstream"])]
            if shm is not None:
                rows += [(f"stdio, {era}, data dir on tmpfs", times["direct stdio"],
                          times["sentinel stdio, tmpfs"]),
                         (f"streamable HTTP, {era}, data dir on tmpfs", times["direct http"],
                          times["sentinel http, tmpfs"])]
            if process:
                rows += [(f"stdio, {era}{SYNC_PROCESS}", times["direct stdio"],
                          times["sentinel stdio, process"]),
                         (f"streamable HTTP, {era}{SYNC_PROCESS}", times["direct http"],
                          times["sentinel http, process"]),
                         (f"streamable HTTP, {era}, stdio upstream{SYNC_PROCESS}", times["direct http"],
                          times["sentinel http, stdio upstream, process"])]
        if seconds:
            d_rps = anyio.run(throughput, up_url, clients, seconds)
            p_rps = anyio.run(throughput, f"http://127.0.0.1:{gw_port}/mcp", clients, seconds)
    finally:
        for proc, _ in fronts.values():
            stop_process(proc)
        stop_process(upstream)
        if shm is not None:
            shutil.rmtree(shm, ignore_errors=True)
    return rows, d_rps, p_rps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--tmpfs", action="store_true", help="also the gateways with their data dir on /dev/shm")
    ap.add_argument("--process", action="store_true", help='also the gateways with audit.sync "process"')
    args = ap.parse_args()
    rows, d_rps, p_rps = measure(args.calls, args.seconds, tmpfs=args.tmpfs, process=args.process)
    print(
        f"\nProxy overhead, no-op tool, {args.calls} sequential calls each, both protocol eras "
        f"({os.cpu_count()} cores); added = Sentinel p50 - direct p50, goal <= 0.5 ms\n"
    )
    print(
        f"{'transport, era':40} {'direct p50':>11} {'direct p99':>11} {'sentinel p50':>13} "
        f"{'sentinel p99':>13} "
        f"{'p50 ratio':>10} {'added p50':>10}"
    )
    for label, d, p in rows:
        added = statistics.median(p) - statistics.median(d)
        print(
            f"{label:40} {statistics.median(d):9.2f}ms {pct(d, 0.99):9.2f}ms {statistics.median(p):11.2f}ms "
            f"{pct(p, 0.99):11.2f}ms {statistics.median(p) / statistics.median(d):9.2f}x {added:8.2f}ms"
            f"  {'met' if added <= 0.5 else 'NOT MET'}"
        )
    if args.seconds:  # 0: no rate measured
        print(
            f"\n16 concurrent HTTP clients for {args.seconds:.0f}s: direct {d_rps:.0f} calls/s, "
            f"through Sentinel {p_rps:.0f} calls/s (ratio {p_rps / d_rps:.2f})"
        )


if __name__ == "__main__":
    main()
