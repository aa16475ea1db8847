"""The gateway as other parts see it: one way in for every tool call, whatever its front.

The MCP front, the A2A binding and the policy solver (fetching facts) all call ``GatewayPort.invoke``;
so every call is guarded and audited on the same path.
"""

from __future__ import annotations

from typing import Annotated, Any, Awaitable, Callable, Literal, Protocol

from mcp_types import (
    CallToolResult,
    CompleteResult,
    GetPromptResult,
    InputRequiredResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Tool,
)
from pydantic import BaseModel, ConfigDict, PlainValidator

from sentinel_mcp.core.call_request import CallRequest, ProgressFn
from sentinel_mcp.core.decision import Answer, Deny, Origin, Question, ToolCall
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.tool_ref import ToolRef

__all__ = ["CallOutcome", "CallRequest", "Completed", "FrontPort", "GatewayPort", "InvokeOutcome",
           "NeedsInput", "NotInCatalog", "ProgressFn", "Refused", "UpstreamNeedsInput"]


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
    identity: str | None = None  # the tool the questions are about (``<server>__<tool>``): answers are for it


def _text_as_given(value: Any) -> str:
    """A text kept as given: a ``display_text.Marked`` reason stays marked (a str field made it a plain str,
    whose marks, shown again, read ``⟨U+27E8⟩U+200B⟨U+27E9⟩``)."""
    if not isinstance(value, str):
        raise ValueError("a reason is a text")  # noqa: TRY004 - pydantic's validation error, as for a str
    return value


class Refused(BaseModel):
    """The guard denied, or the call could not be routed (unknown tool, bad arguments, breaker open)."""

    kind: Literal["refused"] = "refused"
    reason: Annotated[str, PlainValidator(_text_as_given)]
    decision: Deny | None = None
    decision_id: str | None = None  # the audit record of this decision (none when nothing could be recorded)


InvokeOutcome = Completed | NeedsInput | Refused


class UpstreamNeedsInput(BaseModel):
    """A 2026-era upstream returned ``InputRequiredResult``; the front relays it to its client."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    kind: str = "upstream_needs_input"
    result: InputRequiredResult
    call: ToolCall
    decision_id: str | None = None  # the decision that let the call reach the upstream
    answered: tuple[str, ...] = ()  # the keys of the questions it was allowed on (``CallRequest.answered``)


# what a call through the front may end in: a 2026-era upstream's own questions are relayed to its client
CallOutcome = InvokeOutcome | UpstreamNeedsInput


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
        identity: str | None = None,
        purpose: str | None = None,
        recheck: Callable[[], Any] | None = None,
    ) -> InvokeOutcome:
        """``recheck``: the caller's credentials, asked again just before the call is sent upstream (a call
        made later for a request, e.g. an A2A task's: ``gateway/caller_recheck.py``). ``purpose``: the one the
        caller stated (consents are per purpose). ``link`` (a ``CallerLink`` that can push) relays an
        upstream's questions during the call to a person, e.g. the agent's own caller; without one they end
        the call as refused. ``identity``: with the
        answers to an earlier round's questions, that round's ``NeedsInput.identity`` (the answers count for
        that tool only: the call is refused if the name now routes to another)."""
        ...

    def find_tool(self, name: str) -> Tool | None:
        """The catalog entry (annotations, schemas) of an exposed tool name, or None."""
        ...

    def list_catalog_tools(self, principal: Any = None) -> list[Tool]:
        """The catalog, or the part of it ``principal`` (a Principal) may reach."""
        ...

    def identity_of(self, name: str) -> ToolRef | None:
        """Which tool an exposed name is (the server that owns it and the tool's own name, whatever prefix
        exposes it: what configured globs and rules name), or None when the catalog has no such name."""
        ...

    def self_confirming(self, name: str) -> bool:
        """Whether calls to the catalog tool ``name`` are left to its trusted built-in's own confirmation."""
        ...

    async def judged_arguments(self, name: str, arguments: Any) -> tuple[dict[str, Any], str | None]:
        """``(the arguments a call of ``name`` is judged on, None)``: the schema's defaults filled, undeclared
        keys as the upstream is set, the argument form's (what the guard reads on the call path); or the
        arguments as given and why the call path refuses them. A look at what a call would get judges these.
        """
        ...

    def principal_for(self, principal: Any, session_id: str, origin: Origin) -> Any:
        """The principal (a Principal) a call runs for: the one given (by name: as configured), else the owner
        of its session."""
        ...

    async def refusal_for(
        self, principal: str, name: str, arguments: dict[str, Any], *, session_id: str
    ) -> str | None:
        """Why ``principal`` could not call ``name`` with ``arguments`` itself now (None: it could), decided
        as its own A2A call would be, asking nothing and using nothing up: the other side of a call made on
        its behalf (an orchestrator's sub-task for a peer)."""
        ...


class NotInCatalog(GatewayError, LookupError):
    """No such prompt, resource or template for this caller (missing, or of an upstream it may not use)."""


class FrontPort(GatewayPort, Protocol):
    """What the MCP front needs of the gateway: the whole call (``run``, with what only an MCP client brings:
    answers to an upstream's questions, a call already allowed, its purpose), the refusal of answers that
    cannot count, the policy version its round trips are sealed with, the rest of the catalog, and the
    upstream requests it relays (each to the upstream that owns what it names, for a caller allowed to use
    it). The front never reaches into the engine, the upstream manager or the catalog itself (an
    import-linter contract holds it to this).

    Lookups that find nothing, or find what ``principal`` may not use, raise ``NotInCatalog`` alike (a prompt
    or resource of another principal is as unknown as a missing one); an upstream that cannot answer raises
    its ``UpstreamUnavailable``."""

    @property
    def policy_version(self) -> str:
        """The guard's policy version now (a sealed round trip is only good for the version that asked)."""
        ...

    async def run(self, req: CallRequest) -> CallOutcome:
        """One call through the whole pipeline (route, validate, decide, forward, observe)."""
        ...

    async def refuse_answers(
        self,
        name: str,
        arguments: Any,
        *,
        session_id: str,
        client: str | None,
        origin: Origin,
        reason: str,
        principal: Any = None,
    ) -> Refused:
        """Answers that cannot count (no valid state, replayed, not asked): audited, then refused."""
        ...

    def upstream_of(self, name: str) -> str | None:
        """The upstream (by configured name) that serves the exposed tool ``name``."""
        ...

    def mounted_by_sentinel(self, name: str) -> bool:
        """Whether the exposed tool ``name`` is a built-in Sentinel mounted itself (its questions are
        Sentinel's own; any other server's are shown as that server's)."""
        ...

    def pushes_mid_call(self, name: str) -> bool:
        """Whether the tool's upstream is a connected handshake-era server (it may push questions mid-call).
        """
        ...

    def list_resources(self, principal: Any) -> list[Resource]: ...

    def list_resource_templates(self, principal: Any) -> list[ResourceTemplate]: ...

    def list_prompts(self, principal: Any) -> list[Prompt]: ...

    async def read_resource(
        self, uri: str, principal: Any, client: str | None, *, session: str = ""
    ) -> ReadResourceResult:
        """``session``: the caller's conversation (a built-in's resource shows that one's state only)."""
        ...

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None, principal: Any
    ) -> GetPromptResult: ...

    async def complete(
        self, ref: Any, argument: dict[str, Any], context: dict[str, Any] | None, principal: Any
    ) -> CompleteResult:
        """``completion/complete`` for a prompt reference (by exposed name) or a resource template."""
        ...

    def resource_upstream(self, uri: str, principal: Any = None) -> Any:
        """The upstream that owns ``uri`` (for subscriptions), checked against ``principal`` when given."""
        ...

    async def set_log_level(self, level: str | None) -> None:
        """Relay ``logging/setLevel`` (every line, once any client set a level) to each upstream not at it."""
        ...

    def roots_changed(self, principal: str) -> None:
        """A client of ``principal`` said its roots changed: told to each upstream connection that was given
        that principal's roots (``PushRelays.roots_changed``)."""
        ...

    def on_upstream_notices(
        self,
        resource_updated: Callable[[str, str, str | None], Awaitable[None]],
        elicit_complete: Callable[[str, str, str | None], Awaitable[None]],
    ) -> None:
        """Where upstreams' ``resources/updated`` and ``elicitation/complete`` notices go (the front's
        fan-out)."""
        ...
