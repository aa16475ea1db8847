"""One step's decision: the JSON shape the model must produce, made for the screen it is looking at.

The shape is ``grammars/action.gbnf``'s (action, snapshot_id, element_id, text, reasoning), or
``grammars/tool_call.gbnf``'s (tool, arguments) for the non-screen tools the agent may use. Each step gets a
JSON Schema whose ``snapshot_id`` is the current snapshot and whose ``element_id`` is one of the ids on the
current screen, so a grammar-constrained model cannot name an element that is not there. The output is still
hostile: ``parse_decision`` checks everything again (a backend without grammars can answer anything).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from sentinel_mcp.agent.screen import Screen
from sentinel_mcp.core.errors import AgentError
from sentinel_mcp.core.model_json import MAX_OUTPUT_DEPTH, loads_model_json
from sentinel_mcp.core.wire_limits import value_problem
from sentinel_mcp.core.tool_ref import ToolRef

ELEMENT_ACTIONS = ("click", "long_click", "type", "clear")
UI_ACTIONS = (*ELEMENT_ACTIONS, "scroll", "back", "home", "open_app", "wait_for", "done", "fail")
FINAL_ACTIONS = ("done", "fail")
DIRECTIONS = ("up", "down", "left", "right")
# the device's tools the screen actions call (``device_call``) and the loop reads the screen with: reached
# only as the loop's own steps, never offered as plain tools (that passed by its checks: the snapshot pinned
# by the schema, a typed password known, redacted and held to its field)
SCREEN_TOOLS = ("click", "long_click", "type_text", "clear_text", "scroll", "press_back", "press_home",
                "open_app", "wait_for", "screen_read")
PACKAGE_PATTERN = (
    "^[A-Za-z][A-Za-z0-9_]*([.][A-Za-z0-9_]+)+$"  # [.]: the grammar converter rejects an escaped dot
)
PACKAGE_RE = re.compile(PACKAGE_PATTERN)
MAX_TEXT = 500
MAX_REASONING = 300
MAX_ARGUMENTS_BYTES = 4000
# the fields each kind of answer has (``decision_schema``'s alternatives, closed): an answer with any other
# (a tool call that also says done, an action with a tool's arguments) is two answers, not one
TOOL_FIELDS = frozenset({"tool", "snapshot_id", "arguments", "reasoning"})
ACTION_FIELDS = frozenset({"action", "snapshot_id", "element_id", "text", "reasoning"})


class UnusableDecision(AgentError, ValueError):
    """The model's answer cannot be acted on (wrong shape, an element not on the screen, ...)."""


@dataclass
class Decision:
    action: str  # one of UI_ACTIONS, or "tool" for a tool call
    reasoning: str = ""
    snapshot_id: str | None = None
    element_id: str | None = None
    text: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)

    @property
    def final(self) -> bool:
        return self.action in FINAL_ACTIONS

    def public(self, screen: Screen | None = None) -> dict[str, Any]:
        """For the trace: what was decided; text typed into a password field is never kept."""
        data: dict[str, Any] = {"action": self.action, "reasoning": self.reasoning[:MAX_REASONING]}
        if self.tool:
            data.update(tool=self.tool, arguments=self.arguments)
            return data
        data.update(snapshot_id=self.snapshot_id, element_id=self.element_id)
        target = screen.element(self.element_id) if (screen and self.element_id) else None
        if target is not None:
            data["target"] = target.label
        secret = target is not None and target.password
        data["text"] = "<redacted password>" if (secret and self.text) else self.text
        return data


def decision_schema(screen: Screen, tools: list[str]) -> dict[str, Any]:
    """The JSON Schema of this step's answer (compiled to a grammar by the local backend): one alternative per
    kind of action, each with exactly the fields it needs, so a constrained model cannot produce a decision
    that is unusable on this screen (an element that is not there, a type without a text field, ...)."""
    sid = {"enum": [screen.snapshot_id]}
    reasoning = {"type": "string"}

    def alternative(actions: list[str], **fields: Any) -> dict[str, Any]:
        props = {"action": {"enum": actions}, "snapshot_id": sid, **fields, "reasoning": reasoning}
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}

    ids = [e.id for e in screen.elements]
    fields = [e.id for e in screen.elements if e.editable]
    options = [alternative(["click", "long_click"], element_id={"enum": ids})] if ids else []
    if fields:
        options += [
            alternative(["type"], element_id={"enum": fields}, text={"type": "string"}),
            alternative(["clear"], element_id={"enum": fields}),
        ]
    options += [
        alternative(["scroll"], text={"enum": list(DIRECTIONS)}),
        alternative(["back", "home"]),
        alternative(["open_app"], text={"type": "string", "pattern": PACKAGE_PATTERN}),
        alternative(["wait_for"], text={"type": "string"}),
        alternative(["done", "fail"], text={"type": "string"}),
    ]
    if tools:
        options.append(
            {
                "type": "object",
                "properties": {
                    "tool": {"enum": list(tools)},
                    "snapshot_id": sid,
                    "arguments": {"type": "object"},
                },
                "required": ["tool", "snapshot_id", "arguments"],
                "additionalProperties": False,
            }
        )
    return {"anyOf": options}


def parse_decision(data: Any, screen: Screen, tools: set[str]) -> Decision:
    """Check a model answer against the current screen and the allowed tools; UnusableDecision says why not.
    """
    if isinstance(data, str):
        try:
            data = loads_model_json(data)  # strict: a key twice, NaN or Infinity is no answer
        except ValueError:
            raise UnusableDecision("the answer is not JSON") from None
        except RecursionError:  # the model's text is hostile: nested past what the parser recurses
            raise UnusableDecision("the answer is nested deeper than any decision") from None
    elif (problem := value_problem(data, MAX_OUTPUT_DEPTH)) is not None:
        # handed over parsed (the local llm's ``json``): held to the shape a text answer is (depth, finite)
        raise UnusableDecision(f"the answer is not strict JSON ({problem[:120]})")
    if not isinstance(data, dict):
        raise UnusableDecision("the answer is not a JSON object")
    kind, fields = ("tool call", TOOL_FIELDS) if "tool" in data else ("screen action", ACTION_FIELDS)
    if stray := sorted(k for k in data if k not in fields):
        named = ", ".join(repr(k[:40]) for k in stray[:5])
        raise UnusableDecision(f"the answer has fields no {kind} decision has ({named}): one kind only")
    if "tool" in data:
        _check_snapshot(data.get("snapshot_id"), screen)
        return _tool_call(data, tools)
    action = data.get("action")
    if action not in UI_ACTIONS:
        raise UnusableDecision(f"unknown action {str(action)[:40]!r}; use one of {', '.join(UI_ACTIONS)}")
    reasoning = _optional_text(data.get("reasoning"), "reasoning", MAX_REASONING) or ""
    text = _optional_text(data.get("text"), "text", MAX_TEXT)
    decision = Decision(action=action, reasoning=reasoning, text=text)
    if action in FINAL_ACTIONS:
        return decision
    _check_snapshot(data.get("snapshot_id"), screen)
    decision.snapshot_id = screen.snapshot_id
    element_id = data.get("element_id")
    if element_id is not None:
        found = screen.element(str(element_id)) if isinstance(element_id, str | int) else None
        if found is None:
            raise UnusableDecision(f"element {str(element_id)[:40]!r} is not on the current screen")
        decision.element_id = found.id  # an [index] becomes the grounded id
    if action in ELEMENT_ACTIONS and decision.element_id is None:
        raise UnusableDecision(f"{action} needs an element_id from the current screen")
    if action == "type":
        if not text:
            raise UnusableDecision("type needs the text to type")
        if not screen.element(decision.element_id).editable:  # type: ignore[union-attr, arg-type]
            raise UnusableDecision(f"element {decision.element_id} is not a text field")
    if action == "open_app" and not (text and PACKAGE_RE.fullmatch(text)):
        raise UnusableDecision("open_app needs an Android package name in text (e.g. com.android.settings)")
    if action == "wait_for" and not text:
        raise UnusableDecision("wait_for needs the text to wait for")
    if action == "scroll" and text is not None and text not in DIRECTIONS:
        # a direction the model made up ("sideways", "UP ", "down please") is no decision: told and asked
        # again, never guessed (no text at all is the usual meaning: down)
        raise UnusableDecision(f"scroll's text is one of {', '.join(DIRECTIONS)} (or none: down)")
    return decision


def _check_snapshot(snapshot: Any, screen: Screen) -> None:
    """A decision made for another screen is not acted on (the grammar allows null: then the current one)."""
    if snapshot is not None and snapshot != screen.snapshot_id:
        raise UnusableDecision(
            f"snapshot_id {str(snapshot)[:40]!r} is not the current screen ({screen.snapshot_id})"
        )


def _tool_call(data: dict[str, Any], tools: set[str]) -> Decision:
    name = data.get("tool")
    if not isinstance(name, str) or name not in tools:
        raise UnusableDecision(f"tool {str(name)[:64]!r} is not one this agent may use")
    arguments = data.get("arguments", {})
    if not isinstance(arguments, dict):
        raise UnusableDecision("arguments must be a JSON object")
    try:
        size = len(json.dumps(arguments, default=str))
    except (ValueError, RecursionError):  # nested past what can be written, a cycle: no tool's arguments
        raise UnusableDecision("arguments cannot be written as JSON") from None
    if size > MAX_ARGUMENTS_BYTES:
        raise UnusableDecision(f"arguments are larger than {MAX_ARGUMENTS_BYTES} bytes")
    return Decision(
        action="tool",
        tool=name,
        arguments=arguments,
        reasoning=_optional_text(data.get("reasoning"), "reasoning", MAX_REASONING) or "",
    )


def _optional_text(value: Any, what: str, limit: int) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise UnusableDecision(f"{what} must be a string")
    if len(value) > limit:
        raise UnusableDecision(f"{what} is longer than {limit} characters")
    return value


def device_call(decision: Decision, device: str) -> tuple[ToolRef, dict[str, Any]]:
    """The guarded tool call a screen decision becomes: the device tool by identity (``device`` is the server
    that serves the phone, by its configured name), resolved to its exposed name through the catalog."""
    a, sid, eid = decision.action, decision.snapshot_id, decision.element_id
    on_element = {"element_id": eid, "snapshot_id": sid}
    if a == "click":
        return ToolRef(device, "click"), on_element
    if a == "long_click":
        return ToolRef(device, "long_click"), on_element
    if a == "type":
        return ToolRef(device, "type_text"), on_element | {"text": decision.text}
    if a == "clear":
        return ToolRef(device, "clear_text"), on_element
    if a == "scroll":
        args: dict[str, Any] = {"direction": decision.text or "down"}
        if eid is not None:
            args |= on_element
        return ToolRef(device, "scroll"), args
    if a == "back":
        return ToolRef(device, "press_back"), {}
    if a == "home":
        return ToolRef(device, "press_home"), {}
    if a == "open_app":
        return ToolRef(device, "open_app"), {"package": decision.text}
    if a == "wait_for":
        return ToolRef(device, "wait_for"), {"text": decision.text, "timeout_s": 5}
    raise UnusableDecision(f"{a} is not a device action")
