"""Questions from askable and confirmation needs, as MCP elicitations (flat object, primitive properties),
and the facts their answers become.

The question text comes from the rulebase, already formatted with the call's values; it is made safe to show
here (``display_text``), whatever the values hold. An answer's value is taken only when its content validates
strictly against the question's schema (``answer_validation``): no coercion of "yes", "true", 1 or "1".
"""

from __future__ import annotations

import hashlib
from typing import Any

from sentinel_mcp.gateway.answer_validation import BrokenSchema, content_problem
from sentinel_mcp.gateway.decision import Answer, Question, ToolCall
from sentinel_mcp.gateway.display_text import safe_question


class AnswerRefused(Exception):
    """An answer that may not be recorded (wrong provenance, wrong type, value not among the choices)."""


def _answer_schema(kind: str, type_: Any) -> dict[str, Any]:
    if kind == "confirm" or type_ == "yes_no":
        prop: dict[str, Any] = {"type": "boolean", "title": "Yes"}
    elif isinstance(type_, dict) and "choice" in type_:
        prop = {"type": "string", "title": "Choice", "enum": [str(c) for c in type_["choice"]]}
    elif type_ == "number":
        prop = {"type": "number", "title": "Number"}
    else:
        prop = {"type": "string", "title": "Answer"}
    return {"type": "object", "properties": {"answer": prop}, "required": ["answer"]}


def question_of(need: dict[str, Any], call: ToolCall | None, version: str) -> Question:
    kind = need["kind"]
    if kind == "confirm":
        digest = call.digest if call else "none"
        key = f"sentinel.policy.confirm.{digest}"
        meta = {"kind": "confirm", "tool": call.identity if call else None, "digest": digest, "version": version,
                "from": need.get("from", ["user"])}
        return Question(key=key, message=_shown(need, call), requested_schema=_answer_schema("confirm", None),
                        meta=meta)
    h = hashlib.sha256(str(need["fact"]).encode()).hexdigest()[:12]
    key = f"sentinel.policy.ask.{need['predicate']}.{h}"
    key = "".join(ch if ch.isalnum() or ch in "_.:-" else "_" for ch in key)
    meta = {"kind": "ask", "predicate": need["predicate"], "inputs": need.get("inputs", []), "type": need["type"],
            "from": need.get("from", ["user", "agent"]), "fact": need["fact"]}
    return Question(key=key, message=_shown(need, call), requested_schema=_answer_schema("ask", need["type"]),
                    meta=meta)


def _shown(need: dict[str, Any], call: ToolCall | None) -> str:
    text, _ = safe_question(str(need["question"]), call.arguments if call is not None else None)
    return text


def answer_value(question: Question, answer: Answer) -> Any:
    """The typed answer; raises AnswerRefused if it does not fit the question (strictly, no coercion)."""
    allowed = question.meta.get("from") or ["user"]
    if answer.provenance not in allowed:
        raise AnswerRefused(f"this question must be answered by: {', '.join(allowed)} "
                            f"(an answer with provenance {answer.provenance!r} is not accepted)")
    try:
        problem = content_problem(question.requested_schema, answer.content)
    except BrokenSchema as e:
        raise AnswerRefused(f"the question's schema is invalid ({e})") from None
    if problem:
        raise AnswerRefused(f"the answer was not accepted: {problem}")
    return answer.content["answer"]  # type: ignore[index]  # validated: present and of the asked type
