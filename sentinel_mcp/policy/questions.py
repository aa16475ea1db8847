"""Questions from askable and confirmation needs, as MCP elicitations (flat object, primitive properties),
and the facts their answers become."""

from __future__ import annotations

import hashlib
from typing import Any

from sentinel_mcp.gateway.decision import Answer, Question, ToolCall


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
        return Question(key=key, message=str(need["question"]), requested_schema=_answer_schema("confirm", None),
                        meta=meta)
    h = hashlib.sha256(str(need["fact"]).encode()).hexdigest()[:12]
    key = f"sentinel.policy.ask.{need['predicate']}.{h}"
    key = "".join(ch if ch.isalnum() or ch in "_.:-" else "_" for ch in key)
    meta = {"kind": "ask", "predicate": need["predicate"], "inputs": need.get("inputs", []), "type": need["type"],
            "from": need.get("from", ["user", "agent"]), "fact": need["fact"]}
    return Question(key=key, message=str(need["question"]), requested_schema=_answer_schema("ask", need["type"]),
                    meta=meta)


def answer_value(question: Question, answer: Answer) -> Any:
    """The typed answer; raises AnswerRefused if it does not fit the question."""
    allowed = question.meta.get("from") or ["user"]
    if answer.provenance not in allowed:
        raise AnswerRefused(f"this question must be answered by: {', '.join(allowed)} "
                            f"(an answer with provenance {answer.provenance!r} is not accepted)")
    content = answer.content or {}
    if "answer" not in content:
        if len(content) == 1:
            value = next(iter(content.values()))
        else:
            raise AnswerRefused("the answer must have the field 'answer'")
    else:
        value = content["answer"]
    type_ = "yes_no" if question.meta.get("kind") == "confirm" else question.meta.get("type")
    if type_ == "yes_no":
        if isinstance(value, str) and value.lower() in ("yes", "true", "y"):
            return True
        if isinstance(value, str) and value.lower() in ("no", "false", "n"):
            return False
        if not isinstance(value, bool):
            raise AnswerRefused(f"a yes/no answer must be true or false, got {value!r}")
        return value
    if isinstance(type_, dict) and "choice" in type_:
        choices = [str(c) for c in type_["choice"]]
        if str(value) not in choices:
            raise AnswerRefused(f"the answer must be one of {', '.join(choices)}, got {value!r}")
        return str(value)
    if type_ == "number":
        try:
            return float(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else value
        except (TypeError, ValueError):
            raise AnswerRefused(f"the answer must be a number, got {value!r}") from None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise AnswerRefused(f"the answer must be text, got {value!r}")
    return str(value)
