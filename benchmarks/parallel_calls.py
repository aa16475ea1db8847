"""One stdio client's parallel calls: a 50 ms tool, 16 calls in flight, direct against through Sentinel.

An LLM client calls tools in parallel; a handshake-era stdio upstream's pushed questions name no call, and
Sentinel's calls to such an upstream used to wait for each other whoever made them (one at a time: 20 calls/s
of a 50 ms tool). The calls one client makes on its channel now overlap (``gateway/party_turns.py``), held
calls of a 2026-era client that can be asked too. Rows:
the toolbox's ``slow`` tool over stdio, directly and through Sentinel (stdio front, the toolbox over stdio
behind it), in both eras, calls per second with 16 in flight, the ideal (16 per 50 ms) beside them. No goal of
issue 21 names this; the ratio to direct is the figure.
Usage: python benchmarks/parallel_calls.py [--seconds 3] [--in-flight 16]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import ElicitResult

ROOT = Path(__file__).resolve().parent.parent
TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
TOOL_SECONDS = 0.05


async def _decline(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


async def rate(params: StdioServerParameters, mode: str, seconds: float, in_flight: int,
               asked: bool = False) -> float:
    """Calls per second of ``slow`` with ``in_flight`` calls always waiting, after a warm-up call. ``asked``:
    the client declares elicitation (a 2026-era one's calls are then held calls)."""
    callbacks: dict[str, Any] = {"elicitation_callback": _decline} if asked else {}
    async with Client(params, mode=mode, **callbacks) as c:
        name = "slow" if "slow" in {t.name for t in (await c.list_tools()).tools} else "tb__slow"
        await c.call_tool(name, {"seconds": TOOL_SECONDS})
        done = 0
        end = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < end:
                await c.call_tool(name, {"seconds": TOOL_SECONDS})
                done += 1

        t0 = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(in_flight):
                tg.start_soon(worker)
        return done / (time.perf_counter() - t0)


def rows(seconds: float, in_flight: int = 16) -> list[tuple[str, str, str, None]]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "sentinel.json"
        cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                                   "sentinel": {"data_dir": str(Path(d) / "state"), "builtins": []}}))
        direct = StdioServerParameters(command=sys.executable, args=[TOOLBOX], env=env)
        serve = ["-m", "sentinel_mcp", "-c", str(cfg), "serve"]
        proxied = StdioServerParameters(command=sys.executable, args=serve, env=env, cwd=str(ROOT))
        ideal = in_flight / TOOL_SECONDS
        out = []
        for era, mode, asked in (("2026-07-28", "auto", False), ("2025-11-25", "legacy", False),
                                 ("2026-07-28, the client declares elicitation (held calls)", "auto", True)):
            d_rate = anyio.run(rate, direct, mode, seconds, in_flight, asked)
            p_rate = anyio.run(rate, proxied, mode, seconds, in_flight, asked)
            label = f"one stdio client, {in_flight} at once, a {TOOL_SECONDS * 1000:.0f} ms tool, {era}"
            out.append((label, f"direct {d_rate:.0f}/s, through Sentinel {p_rate:.0f}/s "
                               f"(ratio {p_rate / max(d_rate, 1e-9):.2f}; at most {ideal:.0f}/s)", "", None))
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--in-flight", type=int, default=16)
    args = ap.parse_args()
    for label, figure, _, _ in rows(args.seconds, args.in_flight):
        print(f"{label}: {figure}")


if __name__ == "__main__":
    main()
