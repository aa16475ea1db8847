from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # scripted_model lives beside the tests

from scripted_model import ScriptedModelServer

from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend, OpenAISettings
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import swarm_settings


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
    server = ScriptedModelServer().start()
    yield server
    server.stop()


FAST_OPENAI = {"timeout": 2.0, "backoff_base": 0.01, "max_attempts": 3, "model": "scripted-1"}


def openai_factory(server: ScriptedModelServer, **overrides: Any):
    settings = OpenAISettings(**(FAST_OPENAI | overrides))

    async def factory() -> OpenAIBackend:
        return OpenAIBackend(settings, server.url, "test-key")
    return factory


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[BuildService]:
    svc = BuildService(tmp_path / "swarm", swarm_settings({"backend": "openai"}))
    await svc.start()
    yield svc
    await svc.close()


def make_service(tmp_path: Path, section: dict[str, Any]) -> BuildService:
    return BuildService(tmp_path / "swarm", swarm_settings({"backend": "openai"} | section))
