"""The config's ``sentinel.swarm`` section, validated (errors name the key)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sentinel_mcp.core.settings import validate_section
from sentinel_mcp.swarm.backends.openai_http import OpenAISettings
from sentinel_mcp.swarm.breakers import BreakerSettings
from sentinel_mcp.swarm.limits import Limits
from sentinel_mcp.swarm.toolchain import VerifySettings


class LocalSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str = "llm__llm_generate"  # through the gateway (guarded) when mounted
    model_path: str | None = None  # standalone (CLI, python -m): load this GGUF with the llm engine
    max_tokens: int = Field(1024, ge=64, le=32_768)  # per call; keep <= sentinel.llm.max_tokens


class RetentionSettings(BaseModel):
    """How long what a build leaves behind is kept (the design: failed workspaces 7 days, debug logs 7)."""

    model_config = ConfigDict(extra="forbid")

    failed_workspace_days: float = Field(7, gt=0, le=3650)  # a FAILED build's files
    debug_log_days: int = Field(7, ge=1, le=365)  # logs/swarm-debug.log (every model call, every check)
    sweep_hours: float = Field(6, gt=0, le=24 * 7)  # how often a running service sweeps
    # a principal's COMPLETED workspaces on this disk: at most this many and this much, its oldest removed
    # first (when a build of its completes, and at each sweep); one principal cannot fill the disk
    max_kept_workspaces: int = Field(50, ge=1, le=10_000)
    max_kept_mib: int = Field(2048, ge=1, le=1024 * 1024)


class SwarmSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # auto: the calling client's own model when it offers sampling (relayed by the gateway), else local
    backend: Literal["auto", "local", "openai", "sampling"] = "auto"
    limits: Limits = Field(default_factory=Limits)
    breakers: BreakerSettings = Field(default_factory=BreakerSettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    log_retention_days: int = Field(30, ge=1, le=365)
    debug_log: bool = False  # logs/swarm-debug.log: every model call and check, kept retention.debug_log_days
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    verify: VerifySettings = Field(default_factory=VerifySettings)
    # a caller waiting for a build (wait: true) hears from it at least this often, even while one model
    # call runs for minutes: progress keeps the call's deadline alive through the gateway
    heartbeat_seconds: float = Field(15.0, gt=0, le=300)
    # replicas on one PostgreSQL: a build's lease (build_lease.py), renewed by the replica running it; one not
    # renewed for this long is ended FAILED by another replica (its replica is taken for dead)
    build_lease_seconds: float = Field(30.0, gt=0, le=3600)
    build_lease_renew_seconds: float = Field(10.0, gt=0, le=3600)
    # builds one principal may start in any hour: the one build slot and the disk are shared, and a caller
    # whose own model answers at once (sampling) could otherwise start builds back to back without end
    max_builds_per_hour: int = Field(30, ge=1, le=10_000)
    # the one build slot is shared fairly: a principal refused because another's build held it has the next
    # turn for this long once the slot is free (the principal whose build just ended waits behind it); 0: off
    fair_turn_seconds: float = Field(300.0, ge=0, le=3600)
    coder_max_tokens: int = Field(
        512, ge=64, le=8000
    )  # the design's 8,000 is for whole files; answers are short


def swarm_settings(section: dict[str, Any] | None, where: str = "sentinel.swarm") -> SwarmSettings:
    """Strict, as every config section: a string "3" is no number and "yes" no true (never coerced); the CLI's
    own overrides are checked here too, after the file's check."""
    return validate_section(SwarmSettings, section or {}, where)
