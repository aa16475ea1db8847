"""A build whose gateway was killed (-9) mid-build, seen after the gateway restarts: its record says how it
ended, on every road, whether or not a swarm tool was called since.

The console read the swarm's store as it was left: the build stayed PLANNING or EXECUTING, its page
"refreshes while it runs" every 5 s, for ever, until someone happened to call a swarm tool (which starts the
built-in, and it ended the build then). Now the console ends a build that no live process runs (nothing holds
the build slot) before it shows it, as the built-in does at its start."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import anyio
import pytest
from tests.console.console_rig import ALICE, console_config, http_sentinel, mcp_client, signed_in
from tests.swarm.support.scripted_model import SPEC, ScriptedModelServer
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def model_server():
    server = ScriptedModelServer().start()
    yield server
    server.stop()


def _config(tmp_path: Path) -> Path:
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["builtins"] = [*body["sentinel"]["builtins"], "swarm"]
    body["sentinel"]["policy"] = {"allow": ["swarm__*"]}
    body["sentinel"]["swarm"] = {"verify": NO_TOOLS, "backend": "openai", "openai": FAST_OPENAI}
    cfg.write_text(json.dumps(body))
    return cfg


async def test_a_build_whose_gateway_was_killed_reads_as_ended_after_the_restart(
    tmp_path, model_server, monkeypatch
) -> None:
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    cfg = _config(tmp_path)
    model_server.hold.clear()  # the planner's call waits: the build is mid-way when the gateway dies
    with http_sentinel(cfg) as (base, proc):
        async with mcp_client(base, ALICE) as alice:
            started = await alice.call_tool("swarm__swarm_build", {"spec": SPEC})
            assert not started.is_error, started.content[0].text
            task_id = started.structured_content["task_id"]
            with anyio.fail_after(30):
                while not model_server.requests:
                    await anyio.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    model_server.hold.set()

    with http_sentinel(cfg) as (base, _proc):
        async with signed_in(base, ALICE) as person:
            page = await person.page(f"/console/builds/{task_id}")
            listing = await person.page("/console/builds")
        assert 'id="build-state">FAILED' in page, page[:3000]
        assert "interrupted" in page and 'http-equiv="refresh"' not in page
        assert 'http-equiv="refresh"' not in listing
        async with mcp_client(base, ALICE) as alice:
            status = (await alice.call_tool("swarm__swarm_status", {"task_id": task_id})).structured_content
            assert status["state"] == "FAILED" and status["error"].startswith("interrupted"), status
            # the slot its dead process held is free: the next build runs to the end
            done = await alice.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
            assert not done.is_error and done.structured_content["state"] == "COMPLETED", done.content[0].text
