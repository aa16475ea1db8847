"""Helpers shared by the swarm tests (a uniquely named module: ``conftest`` is ambiguous suite-wide)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.swarm.support.scripted_model import ScriptedModelServer

from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend, OpenAISettings
from sentinel_mcp.swarm.build_service import BuildService
from sentinel_mcp.swarm.settings import swarm_settings

FAST_OPENAI = {"timeout": 2.0, "backoff_base": 0.01, "max_attempts": 3, "model": "scripted-1"}
NO_TOOLS = {"kotlin": False, "resources": False}


def openai_factory(server: ScriptedModelServer, **overrides: Any):
    settings = OpenAISettings(**(FAST_OPENAI | overrides))

    async def factory() -> OpenAIBackend:
        return OpenAIBackend(settings, server.url, "test-key")
    return factory


def gateway_config(tmp_path: Path, swarm: dict[str, Any] | None = None,
                   timeouts: dict[str, Any] | None = None) -> Any:
    """A gateway with the swarm built-in only, its tools allowed; the scripted model (``openai_env``) by
    default, no verification tools."""
    from sentinel_mcp.config import parse_config

    section = {"backend": "openai", "openai": FAST_OPENAI} if swarm is None else swarm
    return parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(tmp_path),
                "builtins": ["swarm"],
                "policy": {"allow": ["swarm__*"]},
                "builtin_timeouts": {"swarm": timeouts} if timeouts else {},
                "swarm": {"verify": NO_TOOLS} | section,
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )


def make_service(tmp_path: Path, section: dict[str, Any]) -> BuildService:
    return BuildService(
        tmp_path / "swarm", swarm_settings({"backend": "openai", "verify": NO_TOOLS} | section)
    )
