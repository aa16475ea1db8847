"""The lean HTTP forward's own CPU a call, two source trees side by side (issue 21, the real-upstream row: the
forward's share of the gateway loop's CPU). One test toolbox (streamable HTTP); for each tree, in a process of
its own (its sources first on the path), one ``Upstream`` (``"protocol": "modern"``) makes ``--calls``
sequential ``noop`` calls per block after a warm-up; the trees alternate, ``--blocks`` times. Prints the
calling thread's CPU a call (user + system, and system alone) of every block and the medians: the forward
without the gateway's pipeline around it, the figure a cut in ``gateway/lean_http.py`` or
``gateway/lean_upstream.py`` moves.

Usage: python benchmarks/harness/forward_cpu_ab.py --base /work/main [--calls 600] [--blocks 4]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


async def _nothing(*_: Any) -> None:
    return None


async def _measure(url: str, calls: int, rounds: int) -> list[tuple[float, float]]:
    import anyio

    from sentinel_mcp.config import RemoteServer
    from sentinel_mcp.gateway.upstream import Upstream, UpstreamHooks

    up = Upstream("tb", RemoteServer(url=url, protocol="modern"), UpstreamHooks(catalog_changed=_nothing),
                  health_interval=3600)
    out = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(up.run)
        if not await up.wait_ready(60):
            raise RuntimeError(f"upstream not ready: {up.last_error}")
        for _ in range(100):  # warm up
            await up.call_tool("noop", {})
        for _ in range(rounds):
            before = resource.getrusage(resource.RUSAGE_THREAD)
            cpu = time.thread_time()
            for _ in range(calls):
                await up.call_tool("noop", {})
            after = resource.getrusage(resource.RUSAGE_THREAD)
            out.append(((time.thread_time() - cpu) * 1e6 / calls,
                        (after.ru_stime - before.ru_stime) * 1e6 / calls))
        await up.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", help="the other source tree")
    ap.add_argument("--calls", type=int, default=600)
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # url calls rounds
    args = ap.parse_args()
    if args.child:
        import anyio

        url, calls, rounds = args.child
        print(json.dumps(anyio.run(_measure, url, int(calls), int(rounds))))
        return
    sys.path[:0] = [str(ROOT), str(HERE.parent)]
    import pipeline_capacity as pc
    from tests.conftest import free_port, stop_process

    trees = {"this tree": ROOT}
    if args.base:
        trees = {"base": Path(args.base).resolve(), **trees}
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    toolbox = pc.start([pc.PY, pc.TOOLBOX, "--http", str(port)], url)
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    try:
        for block in range(args.blocks):
            for name, tree in (trees.items() if block % 2 == 0 else list(trees.items())[::-1]):
                own = tree / ".venv" / "bin" / "python"
                env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONWARNINGS": "ignore"}
                p = subprocess.run([str(own) if own.exists() else sys.executable, __file__, "--child", url,
                                    str(args.calls), "3"], env=env, cwd=tree, capture_output=True, text=True,
                                   timeout=600)
                if p.returncode:
                    sys.exit(f"{name}: {p.stderr[-2000:]}")
                rows = json.loads(p.stdout.strip().splitlines()[-1])
                got[name] += [tuple(r) for r in rows]
                print(f"{name:10s} CPU a call (us): {' '.join(f'{c:.1f}' for c, _ in rows)}; system "
                      f"{' '.join(f'{s:.1f}' for _, s in rows)}; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        stop_process(toolbox)
    print(f"\nmedians over {args.blocks} blocks x 3 rounds of {args.calls} sequential calls:")
    for name, rows in got.items():
        print(f"  {name:10s} {statistics.median(c for c, _ in rows):6.1f} us CPU a call, "
              f"{statistics.median(s for _, s in rows):5.1f} us of it system")


if __name__ == "__main__":
    main()
