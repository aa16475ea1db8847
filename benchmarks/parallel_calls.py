"""One stdio client's parallel calls: a 50 ms tool, 16 calls in flight, direct against through Sentinel.

An LLM client calls tools in parallel; a handshake-era stdio upstream's pushed questions name no call, and
Sentinel's calls to such an upstream used to wait for each other whoever made them (one at a time: 20 calls/s
of a 50 ms tool). The calls one client makes on its channel now overlap (``gateway/party_turns.py``), held
calls of a 2026-era client that can be asked too, and a 2026-era HTTP client's requests that carry one
conversation back. Rows: the toolbox's ``slow`` tool over stdio, directly and through Sentinel (stdio front,
the toolbox over stdio behind it), in both eras, calls per second with 16 in flight, the ideal (16 per 50 ms)
beside them; then one 2026-era HTTP client of ``serve --http`` (the same toolbox behind it), its requests
carrying a conversation label (``X-Sentinel-Session``) against carrying nothing (each request a party of its
own). No goal of issue 21 names this; the ratio to direct is the figure.
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
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

ROOT = Path(__file__).resolve().parent.parent
TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
TOOL_SECONDS = 0.05


async def _decline(ctx: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="decline")


async def rate(params: Any, mode: str, seconds: float, in_flight: int,
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
        out.append(http_row(Path(d), seconds, in_flight, d_rate, ideal))
        return out


TOKEN = "parallel-calls-bench-token-0123456789"


def http_row(
    d: Path, seconds: float, in_flight: int, direct: float, ideal: float
) -> tuple[str, str, str, None]:
    """One 2026-era HTTP client of ``serve --http``: its requests carrying a label, then carrying nothing."""
    import socket
    import subprocess
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = d / "sentinel-http.json"
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                               "sentinel": {"data_dir": str(d / "state-http"), "builtins": [],
                                            "http": {"token": TOKEN}}}))
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                             f"127.0.0.1:{port}"], cwd=str(ROOT), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"

        def client(label: str | None) -> Any:
            headers = {"Authorization": f"Bearer {TOKEN}", **({"X-Sentinel-Session": label} if label else {})}
            return streamable_http_client(url, http_client=httpx2.AsyncClient(timeout=60, headers=headers))

        carried = anyio.run(rate, client("bench"), "2026-07-28", seconds, in_flight)
        bare = anyio.run(rate, client(None), "2026-07-28", seconds, in_flight)
    finally:
        proc.terminate()
        proc.wait(10)
    label = (f"one HTTP client (2026-07-28), {in_flight} at once, a {TOOL_SECONDS * 1000:.0f} ms tool at a "
             "stdio upstream")
    ratio = carried / max(direct, 1e-9)
    return (label, f"carrying a conversation label {carried:.0f}/s (ratio {ratio:.2f} of the stdio direct), "
                   f"carrying nothing {bare:.0f}/s (at most {ideal:.0f}/s)", "", None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--in-flight", type=int, default=16)
    args = ap.parse_args()
    for label, figure, _, _ in rows(args.seconds, args.in_flight):
        print(f"{label}: {figure}")


if __name__ == "__main__":
    main()
