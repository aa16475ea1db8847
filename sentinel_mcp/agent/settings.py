"""``sentinel.agent``: which model decides, which tools it may use, and the caps every run lives under."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sentinel_mcp.agent.decision import SCREEN_TOOLS
from sentinel_mcp.agent.health import HealthSettings
from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.tool_ref import ToolRef
from sentinel_mcp.swarm.backends.openai_http import OpenAISettings
from sentinel_mcp.swarm.settings import LocalSettings

# Never reachable from the loop, whatever the config says: the agent must not start agents, answer questions
# or bind contexts in the user's name (any of Sentinel's own tools), manage consents, or speak for Sentinel to
# other agents. Matched against a tool's identity and the name exposing it.
FORBIDDEN_TOOLS = ("agent__*", "sentinel__*", "a2a__*", "sensors__sensor_consent")


class Caps(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(12, ge=1, le=50)
    max_seconds: float = Field(300.0, gt=0, le=3600)
    max_tokens: int = Field(60_000, ge=256, le=2_000_000)  # prompt + completion, over the whole run


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: Literal["local", "openai", "sampling"] = "local"
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    local: LocalSettings = Field(default_factory=lambda: LocalSettings(max_tokens=256))
    caps: Caps = Field(default_factory=Caps)
    # the server that serves the phone, by its configured name (the device built-in): its screen tools are
    # found by identity (device__click, ...), whatever prefix exposes them
    device: str = "device"
    # glob patterns of the tools the agent may call besides the screen actions, by identity (``server__tool``:
    # the server's configured name, whatever prefix exposes the tool); each call is still guarded
    tools: list[str] = Field(default_factory=lambda: ["device__sms_list", "device__calendar_list",
                                                      "device__contacts_search", "device__notes_search",
                                                      "device__alarms_show", "device__screen_ocr"])
    # A2A callers (principal names, glob patterns such as "lab-*"; the owner's token is the principal "owner")
    # the
    # owner lets start runs on the phone; none by default: a peer's goal would otherwise read the owner's
    # screen
    # without the owner saying so
    a2a_peers: list[str] = Field(default_factory=list)
    max_goal_chars: int = Field(1000, ge=16, le=4000)
    decision_tokens: int = Field(160, ge=32, le=2048)  # per step: the decision is a short JSON object
    max_failures: int = Field(3, ge=1, le=10)  # model errors, unusable decisions or tool errors in a row
    health: HealthSettings = Field(default_factory=HealthSettings)  # the loop's self-watch (agent/health.py)


def agent_settings(section: dict[str, Any] | None, where: str = "sentinel.agent") -> AgentSettings:
    try:
        return AgentSettings.model_validate(section or {})
    except ValidationError as err:
        e = err.errors()[0]
        key = ".".join(str(p) for p in e["loc"]) or "(section)"
        msg = "unknown key" if e["type"] == "extra_forbidden" else e["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{where}.{key}: {msg}") from None


def allowed_tool(name: str, ref: ToolRef | None, patterns: list[str], device: str | None = None) -> bool:
    """Whether the catalog tool exposed as ``name`` (``ref``: which tool it is) is the agent's to call. The
    configured globs name tools by identity (``server__tool``), so a tool keeps its place whatever prefix
    exposes it; Sentinel's own tools are never the agent's, by identity or by the name exposing them, nor
    are the screen tools of ``device`` (the phone's server): reached as the loop's screen actions only."""
    if ref is None:
        return False
    if any(fnmatchcase(n, p) for n in (ref.identity, name) for p in FORBIDDEN_TOOLS):
        return False
    if device is not None and ref.server == device and ref.tool in SCREEN_TOOLS:
        return False
    return any(fnmatchcase(ref.identity, p) for p in patterns)
