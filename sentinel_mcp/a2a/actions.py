"""What an inbound A2A message asks Sentinel to do, and how a guarded call's outcome reads as A2A.

An inbound message becomes one ``Action``: a guarded tool call (sensor request, tool call, a chat turn
or task offer answered by the local LLM), or a refusal with its reason. Sentinel participates, it
never coordinates: design messages meant for an orchestrator (TaskResult, ...) are rejected.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.types import CallToolResult, TextContent, Tool
from pydantic import ValidationError

from sentinel_mcp.a2a.jsonrpc import INVALID_PARAMS, RpcError, invalid_params_from
from sentinel_mcp.a2a.messages import (
    HumanAssistRequest,
    ResultArtifact,
    SensorRequest,
    SensorResponse,
    TaskOffer,
    TaskResult,
    ToolCall,
    UnknownMessageType,
    parse_design_message,
    typed,
)
from sentinel_mcp.a2a.protocol import Message, Part
from sentinel_mcp.core.decision import Question
from sentinel_mcp.core.display_text import Marked, safe_question, safe_text
from sentinel_mcp.core.port import GatewayPort
from sentinel_mcp.core.tool_ref import ToolRef

# other areas' tools, resolved from the catalog (whatever prefix exposes them)
SENSOR_TOOL = ToolRef("sensors", "sensor_read")
LLM_TOOL = ToolRef("llm", "llm_generate")
AGENT_TOOL = ToolRef(
    "agent", "agent_run"
)  # the agent loop: a free-form intent becomes guarded steps on the phone
MAX_TEXT = 8192
# the built-in whose tools talk to other agents (a2a_send, a2a_relay, a2a_offer, a2a_discover): the A2A
# service calls them itself (a bridged chat, an offer to the orchestrator), so the owner lets them through the
# guard; a peer's tool_call naming one would borrow that leave, and Sentinel's tokens, for its own words
A2A_CLIENT = "a2a"


@dataclass
class GuardedCall:
    kind: str  # "sensor_request" | "tool_call" | "task_offer" | "chat"
    tool: str
    arguments: dict[str, Any]
    policy_tag: str | None = None


@dataclass
class Rejection:
    reason: str


@dataclass
class AssistRequest:
    """Another agent asks Sentinel's person for help: kept in the inbox, the reply goes back (never acted on).
    """

    request: HumanAssistRequest


Action = GuardedCall | Rejection | AssistRequest


@dataclass
class Capabilities:
    """What the local catalog offers right now (it changes as built-ins come and go)."""

    tools: dict[str, Tool] = field(default_factory=dict)
    named: dict[ToolRef, Tool] = field(
        default_factory=dict
    )  # the areas' tools A2A uses, as the catalog exposes them
    identify: Callable[[str], ToolRef | None] = lambda name: None  # which tool a name is (GatewayPort's)

    @classmethod
    def of(cls, port: GatewayPort) -> Capabilities:
        found = {ref: ref.resolve(port) for ref in (SENSOR_TOOL, LLM_TOOL, AGENT_TOOL)}
        return cls(
            {t.name: t for t in port.list_catalog_tools()},
            {ref: tool for ref, tool in found.items() if tool is not None},
            port.identity_of,
        )

    def talks_to_agents(self, name: str) -> bool:
        """Whether the tool ``name`` (under whatever prefix or spelling the catalog takes) is one of those
        that send to other agents."""
        ref = self.identify(name)
        return ref is not None and ref.server == A2A_CLIENT

    @property
    def llm(self) -> bool:
        return LLM_TOOL in self.named

    @property
    def agent(self) -> bool:
        return AGENT_TOOL in self.named

    @property
    def sensors(self) -> bool:
        return SENSOR_TOOL in self.named


def fit_arguments(tool: Tool | None, arguments: dict[str, Any]) -> dict[str, Any]:
    """Drop None values and keys the tool's input schema does not declare (when it declares properties)."""
    args = {k: v for k, v in arguments.items() if v is not None}
    props = (tool.input_schema or {}).get("properties") if tool is not None else None
    if isinstance(props, dict) and props:
        args = {k: v for k, v in args.items() if k in props}
    return args


def data_parts(message: Message) -> list[dict[str, Any]]:
    return [p.data for p in message.parts if isinstance(p.data, dict)]


def text_of(message: Message) -> str:
    return "\n".join(p.text for p in message.parts if p.text).strip()


def plan(message: Message, caps: Capabilities, task_id: str) -> Action:
    """Decide what a new task does; bad design messages are -32602 (nothing runs)."""
    for data in data_parts(message):
        try:
            parsed = parse_design_message(data)
        except UnknownMessageType as e:
            raise RpcError(INVALID_PARAMS, f"Invalid params: {e}") from None
        except ValidationError as e:
            raise invalid_params_from(e, prefix="message.parts.data") from None
        if parsed is None:
            continue
        kind, model = parsed
        if isinstance(model, SensorRequest):
            if not caps.sensors:
                return Rejection(
                    f"this agent has no sensors capability ({SENSOR_TOOL} is not in its catalog)"
                )
            # only what the peer stated: a field it left out takes the sensors' own setting
            # (default_retention), not the design model's default (300 s kept, where the owner configured 0)
            args = model.model_dump(mode="json", exclude_unset=True)
            args["task_id"] = args.get("task_id") or task_id  # the requester's id, else this A2A task's
            tool = caps.named[SENSOR_TOOL]
            return GuardedCall(kind, tool.name, fit_arguments(tool, args), model.policy_tag)
        if isinstance(model, ToolCall):
            if model.locality != "local" or caps.talks_to_agents(model.name):
                return Rejection(
                    "Sentinel runs local tool calls only; it does not route calls to other agents"
                )
            return GuardedCall(kind, model.name, dict(model.args))
        if isinstance(model, TaskOffer):
            if caps.agent:
                return _agent_call(caps, "task_offer", model.intent)
            if not caps.llm:
                return Rejection(
                    "Sentinel participates but does not plan: no local LLM to take a free-form "
                    "intent, and no orchestrator here. Send a sensor_request or tool_call."
                )
            return _llm_call(
                caps,
                "task_offer",
                model.intent,
                "You are Sentinel, an on-device agent. Do what you can locally; be brief.",
            )
        if isinstance(model, HumanAssistRequest):
            return AssistRequest(model)
        return Rejection(f"Sentinel participates and does not coordinate: it does not take {kind} messages")
    text = text_of(message)
    if text:
        if len(text) > MAX_TEXT:
            raise RpcError(INVALID_PARAMS, f"Invalid params: text longer than {MAX_TEXT} characters")
        if caps.agent:
            return _agent_call(caps, "chat", text)
        if not caps.llm:
            return Rejection(
                "no local responder is available (degraded mode: no local LLM). Send a data part "
                "with a sensor_request or tool_call; the agent card lists the skills."
            )
        return _llm_call(caps, "chat", text, "You are Sentinel, an on-device assistant. Answer briefly.")
    return Rejection("the message has no text and no sensor_request, tool_call or task_offer data part")


def _agent_call(caps: Capabilities, kind: str, goal: str) -> GuardedCall:
    # the peer's words are the goal; every step the agent takes is guarded, and a step that needs the owner's
    # confirmation is refused for a peer (it cannot answer for the owner), which stops the run
    tool = caps.named[AGENT_TOOL]
    return GuardedCall(kind, tool.name, fit_arguments(tool, {"goal": goal}))


def _llm_call(caps: Capabilities, kind: str, prompt: str, system: str) -> GuardedCall:
    tool = caps.named[LLM_TOOL]
    return GuardedCall(kind, tool.name, fit_arguments(tool, {"prompt": prompt, "system": system}))


def answers_in(message: Message) -> dict[str, Any] | None:
    """The ``answers`` map of a continuation message (``{"answers": {key: {action, content}}}``)."""
    for data in data_parts(message):
        answers = data.get("answers")
        if isinstance(answers, dict):
            return answers
    return None


# --- outcome -> A2A --------------------------------------------------------------------------------


def result_text(result: CallToolResult) -> str:
    texts = [c.text for c in result.content if isinstance(c, TextContent)]
    return "\n".join(texts)


def task_result_of(task_id: str, call: GuardedCall, result: CallToolResult) -> TaskResult:
    structured = result.structured_content
    if call.kind == "sensor_request" and isinstance(structured, dict):
        try:  # the reading names the task it answers: the requester's id, else this task's
            reading = SensorResponse.model_validate(
                {**structured, "task_id": structured.get("task_id") or task_id}
            )
            artifact = ResultArtifact(
                artifact_type="sensor_response", content=typed("sensor_response", reading)
            )
            return TaskResult(task_id=task_id, artifacts=[artifact], policy_tag=call.policy_tag)
        except ValidationError:
            pass  # not a SensorResponse: pass the data through as is
    if structured is not None:
        artifact = ResultArtifact(artifact_type="data", content=structured)
    else:
        artifact = ResultArtifact(artifact_type="text", content=result_text(result))
    return TaskResult(task_id=task_id, artifacts=[artifact], policy_tag=call.policy_tag)


def result_parts(task_result: TaskResult, result: CallToolResult) -> list[Part]:
    parts = [Part.of_data(typed("task_result", task_result))]
    text = result_text(result)
    if text:
        parts.append(Part.of_text(text[:MAX_TEXT]))
    return parts


def question_wire(q: Question) -> dict[str, Any]:
    message = safe_question(Marked(q.message))[0]  # Sentinel's, shown when the question was made
    return {"key": q.key, "message": message, "requested_schema": q.requested_schema}


def input_request_parts(agent_id: str, context_id: str, reason: str, questions: list[Question]) -> list[Part]:
    """A HumanAssistRequest, plus the questions' keys and schemas so a peer can answer them.

    Every text a person may read on the other side is shown safely (``display_text``)."""
    reason = safe_text(reason, MAX_TEXT)
    # a Question's message is Sentinel's, shown when it was made (policy, consent, relayed): marked once
    messages = [safe_question(Marked(q.message))[0] for q in questions]
    har = HumanAssistRequest(
        agent_id=agent_id, reason=reason, context_handle=context_id, suggested_questions=list[str](messages)
    )
    lines = [f"Input required: {reason}"] + [f"- {q.key}: {m}" for q, m in zip(questions, messages)]
    lines.append(
        'Answer with a data part {"answers": {"<key>": {"action": "accept", "content": {...}}}} '
        "on this taskId."
    )
    how = {
        "type": "input_request",
        "questions": [question_wire(q) for q in questions],
        "answer_format": {
            "answers": {q.key: {"action": "accept|decline|cancel", "content": {}} for q in questions}
        },
    }
    return [
        Part.of_text("\n".join(lines)),
        Part.of_data(typed("human_assist_request", har)),
        Part.of_data(how),
    ]


def short_json(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "..."
