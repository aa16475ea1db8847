"""``python -m sentinel_mcp.swarm`` served over stdio to the real mcp.Client (both eras)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from mcp import Client, StdioServerParameters
from tests.swarm.support.scripted_model import PLAN_PATHS, SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

pytestmark = [pytest.mark.timeout(90), pytest.mark.parametrize("mode", ["legacy", "auto"])]


async def test_stdio_build_with_progress(tmp_path, model_server, mode) -> None:
    config = tmp_path / "sentinel.json"
    config.write_text(
        json.dumps(
            {
                "sentinel": {
                    "data_dir": str(tmp_path),
                    "swarm": {"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS},
                }
            }
        )
    )
    env = {
        "SWARM_OPENAI_BASE_URL": model_server.url,
        "SWARM_OPENAI_API_KEY": "test-key",
        "PATH": os.environ.get("PATH", ""),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sentinel_mcp.swarm", "-c", str(config)], env=env
    )
    seen: list[float] = []

    async def on_progress(p, total, message):
        seen.append(p)

    async with Client(params, mode=mode) as client:
        r = await client.call_tool("swarm_build", {"spec": SPEC, "wait": True}, progress_callback=on_progress)
        assert not r.is_error, r.content
        assert r.structured_content["state"] == "COMPLETED" and seen[-1] == len(PLAN_PATHS) + 2
        task_id = r.structured_content["task_id"]
        read = await client.read_resource(f"swarm://{task_id}/settings.gradle.kts")
        assert 'include(":app")' in read.contents[0].text
    assert (tmp_path / "swarm" / "logs" / "swarm.log").read_text().count(task_id) >= 3
