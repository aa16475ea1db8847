"""A2A overhead: one tool call made directly on the port, as an A2A SendMessage over HTTP JSON-RPC, and
over the JSONRPC-WS binding, side by side in one run (real uvicorn on 127.0.0.1, real in-process MCP server).

Prints p50/p99 latency (sequential) and calls per second with 16 concurrent callers.
Usage: python benchmarks/a2a_overhead.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "a2a"))
from a2a_rig import open_port, serve

from sentinel_mcp.a2a.settings import A2ASettings

Call = Callable[[], Awaitable[None]]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def send_params() -> dict[str, Any]:
    data = {"type": "tool_call", "tool_call_id": "b", "name": "tools__echo", "args": {"text": "x"}}
    return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"data": data}]}}


async def sequential(call: Call, n: int) -> list[float]:
    for _ in range(20):
        await call()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        await call()
        times.append((time.perf_counter() - t0) * 1000)
    return times


async def throughput(make_call: Callable[[], Awaitable[tuple[Call, Callable[[], Awaitable[None]]]]],
                     workers: int, n_each: int) -> float:
    calls = [await make_call() for _ in range(workers)]

    async def run(call: Call) -> None:
        for _ in range(n_each):
            await call()

    t0 = time.perf_counter()
    await asyncio.gather(*(run(c) for c, _ in calls))
    elapsed = time.perf_counter() - t0
    for _, close in calls:
        await close()
    return workers * n_each / elapsed


async def main(n: int) -> None:
    async with open_port() as port, serve(port, A2ASettings(max_tasks=100_000)) as srv:
        logging.getLogger().setLevel(logging.WARNING)  # MCPServer() turns INFO logging on
        http = httpx2.AsyncClient(timeout=60, headers={"A2A-Version": "1.0"})

        async def direct() -> None:
            out = await port.invoke("tools__echo", {"text": "x"}, session_id="bench", origin="a2a")
            assert out.kind == "completed"

        async def over_http(client: httpx2.AsyncClient = http) -> None:
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": send_params()}
            r = (await client.post(srv.rpc_url, json=body)).json()
            assert r["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

        async def ws_caller() -> tuple[Call, Callable[[], Awaitable[None]]]:
            ws = await connect(srv.ws_url, subprotocols=["a2a.v1.json"])

            async def call() -> None:
                await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                          "params": send_params()}))
                r = json.loads(await ws.recv())
                assert r["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            return call, ws.close

        async def http_caller() -> tuple[Call, Callable[[], Awaitable[None]]]:
            client = httpx2.AsyncClient(timeout=60, headers={"A2A-Version": "1.0"})
            return (lambda: over_http(client)), client.aclose

        async def direct_caller() -> tuple[Call, Callable[[], Awaitable[None]]]:
            async def nothing() -> None:
                return None
            return direct, nothing

        ws_call, ws_close = await ws_caller()
        rows = []
        for label, call, maker in (("direct port.invoke", direct, direct_caller),
                                   ("A2A HTTP JSON-RPC", over_http, http_caller),
                                   ("A2A JSONRPC-WS", ws_call, ws_caller)):
            times = await sequential(call, n)
            rate = await throughput(maker, 16, max(5, n // 16))
            rows.append((label, pct(times, 0.5), pct(times, 0.99), rate))
        await ws_close()
        await http.aclose()

    base = rows[0][1]
    print(
        f"A2A overhead, tools__echo over an in-process MCP server ({n} sequential calls, 16 concurrent "
        "callers)"
    )
    print(f"{'path':<22}{'p50 ms':>9}{'p99 ms':>9}{'x direct':>10}{'calls/s':>10}")
    for label, p50, p99, rate in rows:
        print(f"{label:<22}{p50:>9.2f}{p99:>9.2f}{p50 / base:>10.1f}{rate:>10.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    asyncio.run(main(parser.parse_args().calls))
