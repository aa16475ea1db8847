"""What forwarding one call to a real Python MCP upstream costs the gateway, lean path against the SDK's
client, interleaved in one run: one ``Upstream`` in this process (the test toolbox over stdio and over
streamable HTTP, each era), N sequential calls of its ``noop`` per round, the lean calls
(gateway/lean_upstream.py, gateway/lean_stdio.py) and then the same calls with ``SENTINEL_LEAN_UPSTREAM=off``.
Prints this process's CPU per call (robust to a busy machine) and the wall p50 per call (the upstream's own
time included).

Usage: python benchmarks/harness/forward_cost.py [--calls 300] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))
from sentinel_mcp.config import RemoteServer, StdioServer  # noqa: E402
from sentinel_mcp.gateway.upstream import Upstream, UpstreamHooks  # noqa: E402
from tests.conftest import free_port, stop_process, wait_http  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")


async def _nothing(*_: Any) -> None:
    return None


async def measure(target: Any, calls: int) -> tuple[float, float]:
    """(CPU ms per call of this process, wall p50 ms) for ``calls`` sequential no-op calls."""
    up = Upstream("tb", target, UpstreamHooks(catalog_changed=_nothing), health_interval=3600)
    async with anyio.create_task_group() as tg:
        tg.start_soon(up.run)
        if not await up.wait_ready(60):
            raise RuntimeError(f"upstream not ready: {up.last_error}")
        for _ in range(30):  # warm up
            await up.call_tool("noop", {})
        walls = []
        cpu = time.process_time()
        for _ in range(calls):
            t0 = time.perf_counter()
            await up.call_tool("noop", {})
            walls.append((time.perf_counter() - t0) * 1000)
        cpu = (time.process_time() - cpu) * 1000 / calls
        await up.stop()
    return cpu, statistics.median(walls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen([sys.executable, TOOLBOX, "--http", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    try:
        wait_http(url, proc=server)
        rows = [(f"{kind}, {era}", kind, era) for kind in ("stdio", "streamable HTTP")
                for era in ("legacy", "modern")]
        for _ in range(args.rounds):
            for label, kind, era in rows:
                for path in ("lean", "SDK"):
                    os.environ["SENTINEL_LEAN_UPSTREAM"] = "on" if path == "lean" else "off"
                    target: Any = (StdioServer(command=sys.executable, args=[TOOLBOX], protocol=era)
                                   if kind == "stdio" else RemoteServer(url=url, protocol=era))
                    results.setdefault((label, path), []).append(anyio.run(measure, target, args.calls))
    finally:
        os.environ.pop("SENTINEL_LEAN_UPSTREAM", None)
        stop_process(server)
    load = os.getloadavg()[0]
    print(f"\nForwarding a no-op to the toolbox, {args.calls} sequential calls x {args.rounds} rounds, "
          f"load average {load:.1f}; gateway CPU ms per call (best round) | wall p50 ms (best round)\n")
    print(f"{'upstream, era':28} {'lean CPU':>9} {'SDK CPU':>9} {'saved':>7} {'lean p50':>9} {'SDK p50':>9}")
    for label, _, _ in rows:
        lean, sdk = results[(label, "lean")], results[(label, "SDK")]
        lc, sc = min(c for c, _ in lean), min(c for c, _ in sdk)
        lp, sp = min(p for _, p in lean), min(p for _, p in sdk)
        print(f"{label:28} {lc:9.3f} {sc:9.3f} {sc - lc:7.3f} {lp:9.3f} {sp:9.3f}")


if __name__ == "__main__":
    main()
