"""What a step's record, progress lines and reasons say of it: a decision in words, a call's outcome, and what
of a password typed into a password field is never kept."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

from sentinel_mcp.agent.decision import Decision
from sentinel_mcp.agent.screen import Screen
from sentinel_mcp.core.port import Completed, Refused


def step_words(decision: Decision, screen: Screen, name: str) -> str:
    if decision.tool is not None:
        return f"called {name}"
    target = screen.element(decision.element_id)
    label = f" {target.label!r}" if target is not None else ""
    if decision.action == "type" and target is not None and target.password:
        return f"typed a password into{label}"
    if decision.action == "type":
        return f"typed {(decision.text or '')[:40]!r} into{label}"
    if decision.action == "open_app":
        return f"open_app {decision.text}"
    return f"{decision.action}{label}"


def result_text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def decision_id_of(outcome: Completed | Refused) -> str | None:
    if isinstance(outcome, Refused):
        return outcome.decision_id
    meta = outcome.result.meta or {}
    found = meta.get("sentinel/decision_id")
    return found if isinstance(found, str) else None


def not_acted(outcome: Completed | Refused) -> bool:
    """Whether a step's call did nothing: refused, or an error (the device refuses an action nobody said yes
    to in time)."""
    return isinstance(outcome, Refused) or bool(outcome.result.is_error)


def types_password(decision: Decision, screen: Screen) -> bool:
    target = screen.element(decision.element_id) if decision.element_id else None
    return decision.action == "type" and target is not None and target.password and bool(decision.text)


def field_of(decision: Decision, screen: Screen) -> str:
    """Which field ``decision`` types into, as the next screen names it too: its resource id (an element's id
    is its snapshot's), else its id."""
    target = screen.element(decision.element_id) if decision.element_id else None
    return (target.resource or target.id) if target is not None else ""


def shown_arguments(decision: Decision, arguments: dict[str, Any], screen: Screen) -> dict[str, Any]:
    """The step's call arguments for the trace: text typed into a password field is never kept."""
    target = screen.element(decision.element_id) if decision.element_id else None
    if target is not None and target.password and "text" in arguments:
        return {**arguments, "text": "<redacted password>"}
    return arguments

