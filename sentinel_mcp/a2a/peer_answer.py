"""A peer's task or message (its SendMessage or GetTask answer), read as A2A's JSON mapping says, as its card
is (``protocol.PeerWire``): a field left out, or null, is its default (no artifacts, history or parts,
TASK_STATE_UNSPECIFIED), since proto3 writers such as a2a-sdk leave defaults out; a field present is of its
type, strictly. An answer that is not one is refused whole (``NotAnAnswer``), never read as what it resembles
(parts that were a string, dropped without a word, left a task read as completed and empty).

Only the fields Sentinel reads are typed; others are left as the peer wrote them (``extra="ignore"``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError

from sentinel_mcp.a2a.protocol import PeerWire
from sentinel_mcp.core.errors import A2AError


class NotAnAnswer(A2AError, ValueError):
    """A peer's answer that is not an A2A task or message (a ValueError too: read as bad input)."""


class PeerPart(PeerWire):
    text: str | None = None
    raw: str | None = None
    url: str | None = None
    data: Any = None
    media_type: str | None = None
    filename: str | None = None
    metadata: dict[str, Any] | None = None


class PeerMessage(PeerWire):
    message_id: str = ""
    role: str = ""
    parts: list[PeerPart] = Field(default_factory=list)
    context_id: str | None = None
    task_id: str | None = None


class PeerStatus(PeerWire):
    state: str = "TASK_STATE_UNSPECIFIED"
    message: PeerMessage | None = None
    timestamp: str | None = None


class PeerArtifact(PeerWire):
    artifact_id: str = ""
    name: str = ""
    description: str = ""
    parts: list[PeerPart] = Field(default_factory=list)


class PeerTask(PeerWire):
    id: str = ""
    context_id: str = ""
    status: PeerStatus = Field(default_factory=PeerStatus)
    artifacts: list[PeerArtifact] = Field(default_factory=list)
    history: list[PeerMessage] = Field(default_factory=list)


def _read(model: type[PeerWire], value: object, what: str) -> dict[str, Any]:
    """``value`` as ``model`` reads it, with its defaults spelled out (so a reader finds each field)."""
    try:
        return model.model_validate(value).model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValidationError as e:
        error = e.errors()[0]
        where = ".".join(str(x) for x in error["loc"]) or "itself"
        said = f"the peer's {what} is not an A2A {what} (at {where}: {error['msg']})"
        raise NotAnAnswer(said[:300]) from None


def read_task(value: object) -> dict[str, Any]:
    return _read(PeerTask, value, "task")


def read_message(value: object) -> dict[str, Any]:
    return _read(PeerMessage, value, "message")
