"""The design's six A2A messages (seed 004, "A2A Protocol Primitives"), field for field.

They travel as the ``data`` of an A2A ``Part``. A data part names its message with a ``type`` key
(``{"type": "sensor_request", "sensor": "location", ...}``); without it the shape decides
(``sensor`` -> SensorRequest, ``tool_call_id``/``name``+``args`` -> ToolCall, ``intent`` -> TaskOffer).
The A2A v1.0 wire types live in ``a2a.protocol`` and are re-exported here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sentinel_mcp.a2a.protocol import (
    AgentCard,
    Artifact,
    Message,
    Part,
    Task,
    TaskState,
    TaskStatus,
    now_iso,
    null_is_default,
)
from sentinel_mcp.core.errors import A2AError

# the design's sensor request and answer: a contract the sensors built-in shares (core.sensor_messages)
from sentinel_mcp.core.sensor_messages import SensorRequest, SensorResponse


class _Strict(BaseModel):
    # as a caller's A2A message is read (``protocol.CallerWire``): null is the default, a present field is of
    # its type (a retention of "300" or true is refused, not read as 300 seconds or one)
    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, value: Any) -> Any:
        return null_is_default(value)


class DeviceCaps(_Strict):
    ai_capabilities: list[str] = Field(default_factory=list)
    sensors: list[str] = Field(default_factory=list)
    platform: str | None = None
    os_version: str | None = None


class TaskOffer(_Strict):
    intent_id: str = Field(min_length=1)
    intent: str = Field(min_length=1, max_length=8192)
    capabilities_hint: list[str] = Field(default_factory=list)
    device_caps: DeviceCaps | None = None


class ToolCall(_Strict):
    tool_call_id: str = Field(min_length=1)
    name: str = Field(min_length=1, max_length=256)
    args: dict[str, Any] = Field(default_factory=dict)
    locality: Literal["local", "remote"] = "local"


class HumanAssistRequest(_Strict):
    agent_id: str = Field(max_length=256)
    reason: str = Field(max_length=8192)
    context_handle: str | None = Field(None, max_length=256)
    suggested_questions: list[str] = Field(default_factory=list, max_length=20)


class ResultArtifact(_Strict):
    artifact_type: str = "data"
    content: Any = None


class Citation(_Strict):
    source: str
    url: str | None = None


class TaskResult(_Strict):
    task_id: str
    artifacts: list[ResultArtifact] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    policy_tag: str | None = None
    timestamp: str = Field(default_factory=now_iso)


MessageType = Literal[
    "task_offer", "sensor_request", "sensor_response", "tool_call", "human_assist_request", "task_result"
]
MESSAGE_MODELS: dict[str, type[BaseModel]] = {
    "task_offer": TaskOffer,
    "sensor_request": SensorRequest,
    "sensor_response": SensorResponse,
    "tool_call": ToolCall,
    "human_assist_request": HumanAssistRequest,
    "task_result": TaskResult,
}


def typed(kind: MessageType, model: BaseModel) -> dict[str, Any]:
    """A design message as a data-part payload, tagged with its type."""
    return {"type": kind, **model.model_dump(mode="json", exclude_none=True)}


def guess_type(data: dict[str, Any]) -> str | None:
    """The design message a data part carries: its ``type`` key, else its shape; None if none fits."""
    kind = data.get("type")
    if isinstance(kind, str):
        return kind
    if "sensor" in data:
        return "sensor_request"
    if "tool_call_id" in data or ("name" in data and "args" in data):
        return "tool_call"
    if "intent" in data:
        return "task_offer"
    if "payload" in data and "redactions" in data:
        return "sensor_response"
    if "suggested_questions" in data or "agent_id" in data:
        return "human_assist_request"
    if "artifacts" in data and "task_id" in data:
        return "task_result"
    return None


class UnknownMessageType(A2AError, ValueError):
    pass


def parse_design_message(data: dict[str, Any]) -> tuple[str, BaseModel] | None:
    """Parse a data part into one of the six messages; None when it names none of them.

    Raises ``UnknownMessageType`` for an unknown ``type`` and ``ValidationError`` for bad fields.
    """
    kind = guess_type(data)
    if kind is None:
        return None
    model = MESSAGE_MODELS.get(kind)
    if model is None:
        raise UnknownMessageType(f"unknown message type {kind!r}; known: {', '.join(MESSAGE_MODELS)}")
    body = null_is_default({k: v for k, v in data.items() if k != "type"})
    return kind, model.model_validate(body, strict=True)  # (the sensors' own models too: typed strictly)


__all__ = [
    "MESSAGE_MODELS",
    "AgentCard",
    "Artifact",
    "Citation",
    "DeviceCaps",
    "HumanAssistRequest",
    "Message",
    "Part",
    "ResultArtifact",
    "SensorRequest",
    "SensorResponse",
    "Task",
    "TaskOffer",
    "TaskResult",
    "TaskState",
    "TaskStatus",
    "ToolCall",
    "UnknownMessageType",
    "ValidationError",
    "guess_type",
    "parse_design_message",
    "typed",
]
