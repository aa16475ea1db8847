from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
# the scripted OpenAI-compatible model server (a real HTTP server: the "remote LLM" double) and device helpers

from tests.swarm.support.scripted_model import ScriptedModelServer  # noqa: E402 - found through the path set above


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
    server = ScriptedModelServer().start()
    yield server
    server.stop()


@pytest.fixture
def openai_env(model_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedModelServer:
    """The agent's ``openai`` backend pointed at the scripted model server."""
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    return model_server
