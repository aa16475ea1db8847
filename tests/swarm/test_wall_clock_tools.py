"""The wall-clock cap holds while the verification tools run, not only while a model is asked.

A build's tools (ktlint on a JVM, aapt) run between model calls, each under its own ``verify.timeout``
(180 s, up to 900 s). A build capped at a few seconds, whose tool hung (a slow or stuck JVM: here a ``java``
that never answers, a real process), ran on for that tool's whole timeout (15 minutes) holding the one build
slot before the cap was next looked at. Now a tool is stopped when the build's time is up (its file noted as
not checked), and the build ends FAILED at the cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI
from tests.swarm.support.tool_processes import alive, record_sh, recorded

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("tools_reach_tmp_path")]


def _stuck_java(tmp_path: Path) -> tuple[Path, Path]:
    """A ``java`` that records its pid and never answers; a stand-in ktlint jar beside it."""
    pids = tmp_path / "java.pids"
    java = tmp_path / "java"
    java.write_text(f"#!/bin/sh\n{record_sh(pids)}\nexec sleep 600\n")
    java.chmod(0o755)
    jar = tmp_path / "ktlint"
    jar.write_text("not a jar: never read\n")
    return java, jar


async def test_a_hung_verification_tool_is_stopped_at_the_builds_wall_clock_cap(
    tmp_path, model_server, monkeypatch
) -> None:
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    java, jar = _stuck_java(tmp_path)
    verify = {"kotlin": True, "resources": False, "java": str(java), "ktlint": str(jar), "timeout": 900}
    cfg = parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(tmp_path / "state"),
                "builtins": ["swarm"],
                "policy": {"allow": ["swarm__*"]},
                "swarm": {"verify": verify, "backend": "openai", "openai": FAST_OPENAI},
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )
    async with running_gateway(cfg) as rt, Client(rt.front.server, mode="legacy") as c:
        done = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True, "max_minutes": 0.05})
    assert not done.is_error, done.content[0].text
    assert done.structured_content["state"] == "FAILED"
    assert done.structured_content["error"] == "wall-clock limit of 3 s reached"
    started = recorded(tmp_path / "java.pids")
    assert started  # the tool did run, and was stopped: none of its processes is left
    assert not any(alive(p) for p in started)
