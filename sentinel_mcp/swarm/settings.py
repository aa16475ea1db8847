"""The config's ``sentinel.swarm`` section, validated (errors name the key)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.config import ConfigError
from sentinel_mcp.swarm.backends.openai_http import OpenAISettings
from sentinel_mcp.swarm.breakers import BreakerSettings
from sentinel_mcp.swarm.limits import Limits


class LocalSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = "llm__llm_generate"  # through the gateway (guarded) when mounted
    model_path: str | None = None  # standalone (CLI, python -m): load this GGUF with the llm engine
    max_tokens: int = Field(1024, ge=64, le=32_768)  # per call; keep <= sentinel.llm.max_tokens


class SwarmSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["local", "openai", "sampling"] = "local"
    limits: Limits = Field(default_factory=Limits)
    breakers: BreakerSettings = Field(default_factory=BreakerSettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    log_retention_days: int = Field(30, ge=1, le=365)


def swarm_settings(section: dict[str, Any] | None, where: str = "sentinel.swarm") -> SwarmSettings:
    try:
        return SwarmSettings.model_validate(section or {})
    except ValidationError as err:
        e = err.errors()[0]
        key = ".".join(str(p) for p in e["loc"])
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        raise ConfigError(f"{where}.{key}: {msg}") from None
