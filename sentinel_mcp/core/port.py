"""The gateway as other parts see it: one way in for every tool call, whatever its front.

The MCP front, the A2A binding and the policy solver (fetching facts) all call ``GatewayPort.invoke``;
so every call is guarded and audited on the same path.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Literal, Protocol

from mcp.types import CallToolResult, Tool
from pydantic import BaseModel, ConfigDict

from sentinel_mcp.core.decision import Answer, Deny, Origin, Question

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


class Completed(BaseModel):
    """The call ran upstream (its result may still be an ``isError`` tool result)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    kind: Literal["completed"] = "completed"
    result: CallToolResult


class NeedsInput(BaseModel):
    """The guard asks: answer these questions (``answers`` keyed by ``Question.key``) and call again."""

    kind: Literal["needs_input"] = "needs_input"
    reason: str
    questions: list[Question]
    decision_id: str | None = None  # the audit record of this decision


class Refused(BaseModel):
    """The guard denied, or the call could not be routed (unknown tool, bad arguments, breaker open)."""

    kind: Literal["refused"] = "refused"
    reason: str
    decision: Deny | None = None
    decision_id: str | None = None  # the audit record of this decision (none when nothing could be recorded)


InvokeOutcome = Completed | NeedsInput | Refused


class GatewayPort(Protocol):
    async def invoke(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        session_id: str,
        client: str | None = None,
        origin: Origin = "client",
        answers: dict[str, Answer] | None = None,
        depth: int = 0,
        progress: ProgressFn | None = None,
        principal: Any = None,  # a Principal, or a principal's name (A2A); None: the owner of the session
        link: Any | None = None,
    ) -> InvokeOutcome:
        """``link`` (a ``CallerLink`` that can push) relays an upstream's questions during the call to a person,
        e.g. the agent's own caller; without one they end the call as refused."""
        ...

    def find_tool(self, name: str) -> Tool | None:
        """The catalog entry (annotations, schemas) of an exposed tool name, or None."""
        ...

    def list_catalog_tools(self, principal: Any = None) -> list[Tool]:
        """The catalog, or the part of it ``principal`` (a Principal) may reach."""
        ...


