"""Swarm benchmark: the 2-feature build (15 steps, 16 model calls) against a local OpenAI-compatible HTTP
stand-in (tests/swarm), run directly (BuildService) and through the MCP server in-process (both protocol
eras), beside the cost of the deterministic parts (plan from blueprint, rendering, checks). Prints one table.
The real tools (aapt, ktlint) are off here: they run in seconds per build and are measured by the local-model
benchmark (benchmarks/swarm_local_model.py).

The figures measure the swarm's own overhead (orchestration, SQLite audit, atomic writes, HTTP
client): the stand-in answers at once, so a real model's latency comes on top.

Run: .venv/bin/python benchmarks/swarm_pipeline.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "swarm" / "support"))

from mcp import Client
from decided_project import decided
from scripted_model import BLUEPRINT, MODEL_STEPS, SPEC, ScriptedModelServer

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend, OpenAISettings
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.checks import check_project
from sentinel_mcp.swarm.blueprint import parse_blueprint
from sentinel_mcp.swarm.project_plan import compose_plan
from sentinel_mcp.swarm.server import create_server
from sentinel_mcp.swarm.settings import swarm_settings
from sentinel_mcp.swarm.spec import parse_spec

SETTINGS = {"backend": "openai", "openai": {"model": "bench", "backoff_base": 0.01},
            "verify": {"kotlin": False, "resources": False}}
CALLS = 2 + 2 * MODEL_STEPS


async def build_direct(server: ScriptedModelServer, root: Path) -> tuple[float, float]:
    service = BuildService(root, swarm_settings(SETTINGS))
    await service.start()

    async def factory():
        return OpenAIBackend(OpenAISettings(**SETTINGS["openai"]), server.url, "test-key")
    t0 = time.perf_counter()
    task_id = await service.submit(SPEC, factory)
    status = await service.wait(task_id)
    total = (time.perf_counter() - t0) * 1000
    model_ms = sum(c["duration_ms"] for c in await service.store.api_calls_of(task_id))
    await service.close()
    assert status["state"] == "COMPLETED", status["error"]
    return total, model_ms


async def build_mcp(server: ScriptedModelServer, root: Path, mode: str) -> float:
    import os
    os.environ["SWARM_OPENAI_BASE_URL"], os.environ["SWARM_OPENAI_API_KEY"] = server.url, "test-key"
    swarm = create_server(BuiltinContext(name="swarm", data_dir=root, settings=SETTINGS))
    async with Client(swarm, mode=mode) as client:
        t0 = time.perf_counter()
        r = await client.call_tool("swarm_build", {"spec": SPEC, "wait": True})
        total = (time.perf_counter() - t0) * 1000
    assert r.structured_content["state"] == "COMPLETED"
    return total


def micro(fn, n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


async def main(runs: int) -> None:
    import logging
    logging.disable(logging.INFO)  # MCPServer turns INFO logging on; the table is the output
    server = ScriptedModelServer().start()
    rows: list[tuple[str, str]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            direct, model = [], []
            for i in range(runs):
                t, m = await build_direct(server, Path(tmp) / f"d{i}")
                direct.append(t)
                model.append(m)
            per_call = statistics.median(direct) / CALLS
            rows.append(
                (f"15-step build, BuildService ({CALLS} model calls)", f"{statistics.median(direct):8.1f} ms")
            )
            rows.append(("  of which model HTTP round trips", f"{statistics.median(model):8.1f} ms"))
            rows.append(("  per model call, all included", f"{per_call:8.1f} ms"))
            for mode in ("legacy", "auto"):
                times = [await build_mcp(server, Path(tmp) / f"{mode}{i}", mode) for i in range(runs)]
                rows.append(
                    (
                        f"15-step build via MCP swarm_build wait=true ({mode})",
                        f"{statistics.median(times):8.1f} ms",
                    )
                )
    finally:
        server.stop()
    spec = parse_spec(SPEC)
    files = decided()[2]
    rows.append(
        (
            "check_project on the 15 generated files",
            f"{micro(lambda: check_project(files, spec.package_name), 300):8.1f} µs",
        )
    )
    rows.append(
        (
            "blueprint -> validated 15-step plan",
            f"{micro(lambda: compose_plan(spec, parse_blueprint(BLUEPRINT, spec, max_screens=5), 25), 300):8.1f} µs",  # noqa: E501 (verbatim text)
        )
    )
    rows.append(("every answer rendered (the 15 files)", f"{micro(decided, 50):8.1f} µs"))
    width = max(len(r[0]) for r in rows)
    print(f"swarm pipeline benchmark (median of {runs} runs; scripted model answers at once)")
    print(f"{'measure':<{width}}  {'value':>11}")
    print("-" * (width + 13))
    for name, value in rows:
        print(f"{name:<{width}}  {value:>11}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    asyncio.run(main(p.parse_args().runs))
