"""The event loop held by an upstream's answer of many empty text blocks (1, 4 and 16 MiB, the last just
within the answer's byte bound), a tree against a base tree, alternated round by round (each in its own
process).

A real gateway in-process, a real stdio upstream (``tests/gateway/many_blocks_upstream.py``) in the handshake
era, down the lean path and the SDK client's (``SENTINEL_LEAN_UPSTREAM=off``). While the call runs a ticker
sleeps 1 ms at a time; the longest gap between its wake-ups is the longest the loop was held (every other
client's call waits that long), printed with the call's wall time, in ms, per round and size.

Usage: python benchmarks/harness/result_shape_ab.py --base /path/to/base/tree [--base another] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TREE = Path(__file__).resolve().parents[2]
SIZES = {"1 MiB": 1 << 20, "4 MiB": 4 << 20, "16 MiB": (16 << 20) - 4096}
BLOCK_BYTES = len('{"type": "text", "text": ""}, ')


async def child() -> None:
    from mcp import Client

    from sentinel_mcp.app.runtime import running_gateway
    from tests.gateway.helpers import make_config

    out: dict[str, dict[str, list[float]]] = {}
    servers = {"l": {"command": sys.executable, "args": ["-m", "tests.gateway.many_blocks_upstream"],
                     "cwd": str(TREE), "protocol": "legacy"}}
    async with running_gateway(make_config(Path(tempfile.mkdtemp(prefix="shape-ab-")), servers)) as rt:
        assert await rt.manager.upstreams["l"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            for size, nbytes in SIZES.items():
                gaps: list[float] = []
                done = asyncio.Event()

                async def tick() -> None:
                    last = time.perf_counter()
                    while not done.is_set():
                        await asyncio.sleep(0.001)
                        now = time.perf_counter()
                        gaps.append(now - last)
                        last = now

                ticker = asyncio.ensure_future(tick())
                started = time.perf_counter()
                r = await c.call_tool("l__many_blocks", {"n": nbytes // BLOCK_BYTES})
                wall = time.perf_counter() - started
                done.set()
                await ticker
                assert r.is_error, r.content[0].text[:200]
                out[size] = {"held_ms": [round(max(gaps) * 1000, 1)], "call_ms": [round(wall * 1000, 1)],
                             "said": r.content[0].text[:90]}  # type: ignore[dict-item]
    print(json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, action="append", help="a base tree (repeat for more)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    named = [(f"base{i + 1}" if len(args.base) > 1 else "base", b) for i, b in enumerate(args.base)]
    trees = {name: Path(b).resolve() for name, b in named}
    trees["tree"] = TREE
    for r in range(args.rounds):
        for lean in ("on", "off"):
            for name, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree), "SENTINEL_LEAN_UPSTREAM": lean}
                got = subprocess.run([sys.executable, __file__, "--child"], env=env, cwd=tree,
                                     capture_output=True, text=True, timeout=600)
                if got.returncode:
                    print(got.stderr[-2000:], file=sys.stderr)
                    raise SystemExit(got.returncode)
                res = json.loads(got.stdout.strip().splitlines()[-1])
                cells = "  ".join(f"{size}: held {v['held_ms'][0]:7.1f} call {v['call_ms'][0]:7.1f}"
                                  for size, v in res.items())
                print(f"round {r + 1} lean={lean:3} {name:5}  {cells}", flush=True)
        print(f"  ({res['1 MiB']['said']})")


if __name__ == "__main__":
    if "--child" in sys.argv:
        asyncio.run(child())
    else:
        main()
