"""A question's form, and the typed answer read back from what the browser sent.

Only flat form schemas are asked (MCP elicitation's shape): booleans, enums, strings, numbers. The first
required boolean is the approval itself: the "Approve" button sets it, "Deny" declines the whole question.
Values are typed by the schema here, and checked by the same rule the gateway checks every answer with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.datastructures import FormData

from sentinel_mcp.core.answer_validation import answer_problem
from sentinel_mcp.core.decision import Answer, Question

MAX_TEXT = 2000


@dataclass
class Field:
    name: str  # the form field: q<index>.<property>
    prop: str
    kind: str  # checkbox | select | text | number
    title: str
    choices: list[str]
    required: bool


def approval_property(schema: dict[str, Any]) -> str | None:
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if isinstance(props.get(name), dict) and props[name].get("type") == "boolean":
            return str(name)
    return None


def fields_of(index: int, schema: Any) -> list[Field]:
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties") or {}
    approval = approval_property(schema)
    required = set(schema.get("required") or [])
    out = []
    for prop, spec in props.items():
        if prop == approval or not isinstance(spec, dict):
            continue
        enum = spec.get("enum") or [o.get("const") for o in spec.get("oneOf") or [] if isinstance(o, dict)]
        kind = ("checkbox" if spec.get("type") == "boolean" else "select" if enum
                else "number" if spec.get("type") in ("number", "integer") else "text")
        out.append(
            Field(
                f"q{index}.{prop}",
                str(prop),
                kind,
                str(spec.get("title") or spec.get("description") or prop),
                [str(e) for e in enum if e is not None],
                prop in required,
            )
        )
    return out


def read_answer(
    index: int, question: Question | dict[str, Any], form: FormData, approve: bool
) -> tuple[Answer | None, str | None]:
    """The answer to one question from the form (or why it cannot be taken)."""
    schema = question.requested_schema if isinstance(question, Question) else question.get("requested_schema")
    if not approve:
        return Answer(action="decline", provenance="user"), None
    schema = schema if isinstance(schema, dict) else {}
    props = schema.get("properties") or {}
    content: dict[str, Any] = {}
    approval = approval_property(schema)
    if approval:
        content[approval] = True
    for f in fields_of(index, schema):
        raw = form.get(f.name)
        spec = props.get(f.prop) or {}
        if f.kind == "checkbox":
            content[f.prop] = raw == "on"
            continue
        if not isinstance(raw, str) or raw == "":
            if f.required:
                return None, f"{f.title}: an answer is required"
            continue
        raw = raw[:MAX_TEXT]
        if f.kind == "number":
            try:
                content[f.prop] = int(raw) if spec.get("type") == "integer" else float(raw)
            except ValueError:
                return None, f"{f.title}: not a number"
        else:
            content[f.prop] = raw
    answer = Answer(action="accept", content=content, provenance="user")
    if isinstance(question, Question):
        problem = answer_problem(question, answer)
        if problem:
            return None, problem
    return answer, None
