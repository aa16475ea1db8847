"""A2A v1.0 wire types (``specification/a2a.proto``, ProtoJSON: camelCase fields, SCREAMING_SNAKE enums).

Unknown fields are ignored, as the reference SDK does for forward compatibility; what the protocol
requires (a message id, a role, at least one part, exactly one content per part) is enforced.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, field_validator, model_validator
from pydantic.alias_generators import to_camel

PROTOCOL_VERSION = "1.0"

TaskState = Literal[
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
]
TERMINAL_STATES: frozenset[str] = frozenset(
    {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
)
INTERRUPTED_STATES: frozenset[str] = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})
Role = Literal["ROLE_USER", "ROLE_AGENT"]
# An identifier a peer names (a message, task or context id; ours are UUIDs): bounded, because it is kept in
# every task of that context, becomes part of the guard's session name (and so of every audit row of its
# calls), and is echoed in errors. The WebSocket binding's design calls bound their context ids the same.
MAX_ID = 200
Id = Annotated[str, Field(min_length=1, max_length=MAX_ID)]
MAX_NAMES = 64  # the items of a list of ids or extension URIs


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Wire(BaseModel):
    """camelCase on the wire, snake_case in Python; dump with ``to_wire()``."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def null_is_default(value: Any) -> Any:
    """ProtoJSON: a field that is null is its default, as if left out (a proto3 writer may write either)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    return value


class CallerWire(Wire):
    """What a caller sends Sentinel (its request's params, its message and parts), read as ``PeerWire`` reads
    what a peer writes: left out or null is the default; present, a field is of its type, strictly (a flag of
    "yes" or 1, a number written as text, is refused, not read as what it resembles). Unknown fields are
    ignored, as the reference SDK does."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, value: Any) -> Any:
        return null_is_default(value)


class Part(CallerWire):
    text: str | None = None
    raw: str | None = None  # base64 in JSON
    url: str | None = None
    data: Any = None  # any JSON value; ``None`` here means "no data part" (a JSON null data part is refused)
    metadata: dict[str, Any] | None = None
    filename: str | None = None
    media_type: str | None = None

    @model_validator(mode="after")
    def _one_content(self) -> Part:
        present = [k for k in ("text", "raw", "url", "data") if getattr(self, k) is not None]
        if len(present) != 1:
            raise ValueError(
                f"a Part must have exactly one of text, raw, url, data (got {present or 'none'})"
            )
        return self

    @field_validator("raw")
    @classmethod
    def _base64(cls, v: str | None) -> str | None:
        if v is not None:
            base64.b64decode(v, validate=True)
        return v

    @classmethod
    def of_text(cls, text: str) -> Part:
        return cls(text=text, media_type="text/plain")

    @classmethod
    def of_data(cls, data: Any) -> Part:
        return cls(data=data, media_type="application/json")


class Message(CallerWire):
    message_id: Id
    context_id: Id | None = None
    task_id: Id | None = None
    role: Role
    parts: list[Part] = Field(min_length=1)
    metadata: dict[str, Any] | None = None
    extensions: list[Annotated[str, Field(max_length=2048)]] | None = Field(None, max_length=MAX_NAMES)
    reference_task_ids: list[Id] | None = Field(None, max_length=MAX_NAMES)


class TaskStatus(Wire):
    state: TaskState
    message: Message | None = None
    timestamp: str | None = None


class Artifact(Wire):
    artifact_id: str
    name: str | None = None
    description: str | None = None
    parts: list[Part] = Field(min_length=1)
    metadata: dict[str, Any] | None = None
    extensions: list[str] | None = None


class Task(Wire):
    id: str
    context_id: str
    status: TaskStatus
    artifacts: list[Artifact] | None = None
    history: list[Message] | None = None
    metadata: dict[str, Any] | None = None


# what a caller sends is typed strictly (a JSON number is a number, true is a boolean): lax parsing read
# "2" and true as history lengths and "yes" as a flag, so one request meant different things to two readers
class SendMessageConfiguration(CallerWire):
    # an allow list: a key this agent does not know is refused, never ignored (a v0.3 peer's
    # ``pushNotificationConfig`` or ``blocking`` would otherwise be dropped, the peer waiting for what it
    # asked)
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True)

    accepted_output_modes: list[str] | None = None
    task_push_notification_config: dict[str, Any] | None = None
    history_length: StrictInt | None = Field(None, ge=0)
    return_immediately: StrictBool = False


class SendMessageRequest(CallerWire):
    tenant: Id | None = None
    message: Message
    configuration: SendMessageConfiguration | None = None
    metadata: dict[str, Any] | None = None


class GetTaskRequest(CallerWire):
    tenant: Id | None = None
    id: Id
    history_length: StrictInt | None = Field(None, ge=0)


class ListTasksRequest(CallerWire):
    tenant: Id | None = None
    context_id: Id | None = None
    status: TaskState | None = None
    page_size: StrictInt | None = Field(None, ge=1, le=100)
    page_token: str | None = None
    history_length: StrictInt | None = Field(None, ge=0)
    status_timestamp_after: str | None = None
    include_artifacts: StrictBool = False

    @field_validator("status_timestamp_after")
    @classmethod
    def _iso(cls, v: str | None) -> str | None:
        if v is not None:
            datetime.fromisoformat(v)
        return v


class ListTasksResponse(Wire):
    tasks: list[Task]
    next_page_token: str = ""
    page_size: int
    total_size: int

    def to_wire(self) -> dict[str, Any]:
        # next_page_token is REQUIRED in the proto: keep it even when empty
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class SubscribeToTaskRequest(CallerWire):
    tenant: Id | None = None
    id: Id


class CancelTaskRequest(CallerWire):
    tenant: Id | None = None
    id: Id
    metadata: dict[str, Any] | None = None


# --- Agent card --------------------------------------------------------------------------------


class PeerWire(CallerWire):
    """What a peer wrote (its card; its tasks and messages: ``peer_answer.py``), read as A2A's JSON mapping
    (ProtoJSON) reads it: a field left out, or null, is
    its default (an empty list or map, false, "", an empty message), since proto3 writers leave defaults out
    (a2a-sdk writes a card with no skills without ``skills``); a field present is of its type, strictly (a
    boolean that is "yes" or 1, a list that is a string, is refused, not read as what it resembles): the same
    reading as ``CallerWire``'s."""


class AgentInterface(PeerWire):
    url: str = ""
    protocol_binding: str = ""  # JSONRPC | GRPC | HTTP+JSON | a custom binding
    protocol_version: str = PROTOCOL_VERSION
    tenant: str | None = None


class AgentProvider(PeerWire):
    url: str = ""
    organization: str = ""


class AgentExtension(PeerWire):
    uri: str = ""
    description: str | None = None
    # absent means false: a2a-sdk drops a false one when it re-serializes a card (a proto3 bool), so the form
    # its verifiers canonicalize would differ from what Sentinel signed
    required: bool | None = None
    params: dict[str, Any] | None = None


class AgentCapabilities(PeerWire):
    streaming: bool | None = None
    push_notifications: bool | None = None
    extensions: list[AgentExtension] | None = None
    extended_agent_card: bool | None = None


class AgentSkill(PeerWire):
    id: str = ""
    name: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    examples: list[str] | None = None
    input_modes: list[str] | None = None
    output_modes: list[str] | None = None
    security_requirements: list[dict[str, Any]] | None = None


class AgentCard(PeerWire):
    # a peer is known by its name: a card without one (or with "") names nobody
    name: str = Field(min_length=1)
    description: str = ""
    # a card with no interface cannot be reached: left out or empty, it is refused
    supported_interfaces: list[AgentInterface] = Field(min_length=1)
    provider: AgentProvider | None = None
    version: str = ""
    documentation_url: str | None = None
    capabilities: AgentCapabilities = Field(default_factory=AgentCapabilities)
    security_schemes: dict[str, dict[str, Any]] | None = None
    security_requirements: list[dict[str, Any]] | None = None
    default_input_modes: list[str] = Field(default_factory=list)
    default_output_modes: list[str] = Field(default_factory=list)
    skills: list[AgentSkill] = Field(default_factory=list)
    signatures: list[dict[str, Any]] | None = None
    icon_url: str | None = None
