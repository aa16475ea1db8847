from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

# helpers live in support/ (not beside conftest.py: other areas import "conftest" by name)

from tests.support.open_way import open_the_way
from tests.swarm.support.scripted_model import ScriptedModelServer
from tests.swarm.support.swarm_fixtures import NO_TOOLS

from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import swarm_settings


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
    server = ScriptedModelServer().start()
    yield server
    server.stop()


@pytest.fixture
def openai_env(model_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch) -> ScriptedModelServer:
    """The scripted model as the openai backend's endpoint (through the environment, as a user sets it)."""
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    return model_server


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[BuildService]:
    # the real tools (aapt, ktlint) have their own tests (test_verification.py); here they would only add time
    svc = BuildService(tmp_path / "swarm", swarm_settings({"backend": "openai", "verify": NO_TOOLS}))
    await svc.start()
    yield svc
    await svc.close()


@pytest.fixture
def tools_reach_tmp_path(tmp_path: Path) -> None:
    """Run as root, the gateway runs its tools as another uid (``tool_user.py``): the stand-in tools a test
    writes in ``tmp_path``, and the files they record pids in, are reached through pytest's owner-only
    directories, opened here to traversal (not listing) and ``tmp_path`` itself to writing (a store's
    directory may not be such: only for tests of stand-in tools)."""
    if os.geteuid() != 0:
        return
    open_the_way(tmp_path)
    tmp_path.chmod(0o1777)

