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
