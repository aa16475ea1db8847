"""Sensor policy cost: one sensor read decided by the SensorBridge (consent, scope, rate limit, retention,
audit on real SQLite) next to the bare simulated source and the same read over MCP in-process
(both protocol eras; a refused read, since allowed reads wait for the device rate limit by design),
side by side in one run.

Prints p50/p99 latency per request and requests per second. Usage: python benchmarks/sensor_policy.py [--n N]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from device_tools.sensors.bridge import SensorBridge
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import SensorError
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from device_tools.sensors.server import create_server
from device_tools.sensors.sources.simulated import SimulatedSource
from sentinel_mcp.core.builtin import BuiltinContext


class Ticker:
    """Each call moves time on by 1.01 s, so the 1 Hz location limit never throttles the measured reads."""

    def __init__(self) -> None:
        self.t = 1_760_788_800.0

    def __call__(self) -> float:
        self.t += 1.01
        return self.t


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def timed(n: int, fn) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


async def main(n: int) -> None:
    rows: list[tuple[str, list[float]]] = []
    source = SimulatedSource()
    rows.append(("simulated source only", await timed(n, lambda: source.read(SensorKind.location))))

    with tempfile.TemporaryDirectory() as d:
        tick = Ticker()
        bridge = SensorBridge(
            SimulatedSource(tick), SensorDatabase(Path(d) / "b"), clock=tick, monotonic=tick
        )
        bridge.consents.grant("bench", SensorKind.location, Scope.detailed)
        req = {"sensor": "location", "scope": "standard", "policy_tag": "bench", "retention": 60}
        rows.append(("bridge: allowed (stored+audited)", await timed(n, lambda: bridge.handle(req, "bench"))))

        async def denied():
            with contextlib.suppress(SensorError):
                await bridge.handle(req, "stranger")

        rows.append(("bridge: denied (no consent)", await timed(n, denied)))

        for mode in ("legacy", "auto"):
            # the device-wide rate limit makes allowed reads wait by design; the refused path measures
            # the MCP tool + resolver + bridge + audit without any waiting
            server = create_server(BuiltinContext(name="sensors", data_dir=Path(d) / mode))
            async with Client(server, mode=mode) as c:
                args = {"sensor": "compass", "policy_tag": "bench"}

                async def call(c=c, args=args):
                    r = await c.call_tool("sensor_read", args)
                    assert r.is_error and r.structured_content["error"] == "consent_required"

                rows.append((f"MCP in-process {mode}: refused+audited", await timed(n, call)))

    print(f"{'path':40} {'n':>6} {'p50 ms':>9} {'p99 ms':>9} {'req/s':>9}")
    for name, s in rows:
        print(
            f"{name:40} {len(s):6d} {pct(s, 0.5):9.3f} {pct(s, 0.99):9.3f} {1000 / statistics.mean(s):9.0f}"
        )


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    anyio.run(main, ap.parse_args().n)
