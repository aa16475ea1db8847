"""A question's form, and the typed answer read back from what the browser sent.

Only flat form schemas are asked (MCP elicitation's shape): booleans, enums, strings, numbers. The first
required boolean is the approval itself: the "Approve" button sets it, "Deny" declines the whole question.
Values are typed by the schema here, and checked by the same rule the gateway checks every answer with.
"""

from __future__ import annotations

import json

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import FormData

from sentinel_mcp.core.answer_validation import answer_problem
from sentinel_mcp.core.decision import Answer, Question

MAX_TEXT = 2000
# what one question's form may put on the page (and a page lists up to inbox_pages.MAX_LISTED items): an
# upstream's form of 300,000 choices made an 11 MB inbox page whose rendering held the gateway's event loop
# (every call) for a second on each view. Past the bound a choice is typed (and checked against the choices as
# every answer is); fields past it are not shown (a required one among them leaves only "Deny")
MAX_FIELDS = 20
MAX_CHOICES = 100
# what a number field may send: a browser's number input's own grammar (ASCII digits, an optional fraction and
# exponent); Python's int() and float() also take "nan", "inf", "1_000", other scripts' digits and spaces
INTEGER = re.compile(r"-?[0-9]+")
NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
# a field's name on the page: the property's own when it is such a word, else ``#<position>`` ("#" is never in
# a word, so the two never meet). A browser sends a name otherwise than the page wrote it (a NUL as U+FFFD, a
# lone CR or LF as CRLF): a ticked box "keep\nbackups" came back under another name and was read as unticked
PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def choice_value(position: int, choice: str) -> str:
    """What a choice's ``<option>`` sends: its own text when a browser sends that back unchanged, else
    ``#<position>`` (a choice's own text never starts with "#"). A browser sends a value otherwise than the
    page wrote it (CR and LF as CRLF, NUL as U+FFFD): of the choices "a<CR><LF>b" and "a<LF>b", the person's
    pick of the second came back as the first."""
    plain = choice != "" and not choice.startswith("#") and not any(
        unicodedata.category(c) in ("Cc", "Cs") for c in choice
    )
    return choice if plain else f"#{position}"


@dataclass
class Field:
    name: str  # the form field: q<index>.<property>, or q<index>.#<position> (PLAIN_NAME)
    prop: str
    kind: str  # checkbox | select | text | number
    title: str
    choices: list[Any]  # each as the form offers it: a text, a number or a boolean (the policy's typed ones)
    required: bool

    @property
    def options(self) -> list[tuple[str, str]]:
        """Each choice's (value sent, text shown): a choice that is no text is sent by its position, and shown
        as JSON writes it (the number 1, not the text "1", which the form may offer beside it)."""
        return [(choice_value(i, c), c) if isinstance(c, str) else (f"#{i}", json.dumps(c))
                for i, c in enumerate(self.choices)]

    def chosen(self, sent: str) -> Any:
        """The choice an option sent names, of its own type; a value no option sends stays as sent."""
        return next((c for (value, _), c in zip(self.options, self.choices) if value == sent), sent)


def _properties(schema: Any) -> dict[str, Any]:
    """A form's fields, whatever shape an upstream sent: only a mapping of named field schemas counts."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    return {k: v for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}


def _names(value: Any) -> list[str]:
    """A list of field names (``required``), whatever shape an upstream sent: only its strings count."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _choices(spec: dict[str, Any]) -> list[Any]:
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        return enum
    one_of = spec.get("oneOf")
    return [o.get("const") for o in one_of if isinstance(o, dict)] if isinstance(one_of, list) else []


def approval_property(schema: dict[str, Any]) -> str | None:
    props = _properties(schema)
    for name in _names(schema.get("required")):
        if name in props and props[name].get("type") == "boolean":
            return name
    return None


def approval_words(schema: Any) -> str:
    """What the form's approval field says (its title, else its description), shown beside "Approve": the
    button answers that field ``true``, and a form may put what it asks there rather than in its message
    ("Continue?" with a field "Also delete every backup"). Empty when the field says nothing but its name."""
    if not isinstance(schema, dict):
        return ""
    approval = approval_property(schema)
    spec = _properties(schema).get(approval or "") or {}
    words = [w for w in (spec.get("title"), spec.get("description")) if isinstance(w, str) and w.strip()]
    return " — ".join(dict.fromkeys(words))


def fields_of(index: int, schema: Any) -> list[Field]:
    # an upstream's form is outside input: a field list, choices or names of another shape are no fields,
    # never an error (one broken form made the whole inbox, every other question on it, answer 500)
    if not isinstance(schema, dict):
        return []
    props = _properties(schema)
    approval = approval_property(schema)
    required = set(_names(schema.get("required")))
    out: list[Field] = []
    for position, (prop, spec) in enumerate(list(props.items())[: MAX_FIELDS + 1]):
        if prop == approval:
            continue
        if len(out) >= MAX_FIELDS:
            break
        enum = _choices(spec)
        enum = enum if len(enum) <= MAX_CHOICES else []
        kind = ("checkbox" if spec.get("type") == "boolean" else "select" if enum
                else "number" if spec.get("type") in ("number", "integer") else "text")
        out.append(
            Field(
                f"q{index}.{prop if PLAIN_NAME.fullmatch(prop) else f'#{position}'}",
                str(prop),
                kind,
                str(spec.get("title") or spec.get("description") or prop),
                [e if isinstance(e, (bool, int, float)) else str(e) for e in enum if e is not None],
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
    props = _properties(schema)
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
        if len(raw) > MAX_TEXT:  # refused, never cut: a cut answer is one the person did not give
            return None, f"{f.title}: at most {MAX_TEXT} characters"
        if f.kind == "select":  # the choice the option named (a value no option sends stays as sent)
            content[f.prop] = f.chosen(raw)
            continue
        if f.kind == "number":
            number = _number(raw, integer=spec.get("type") == "integer")
            if number is None:
                return None, f"{f.title}: not a number"
            content[f.prop] = number
        else:
            content[f.prop] = raw
    answer = Answer(action="accept", content=content, provenance="user")
    if isinstance(question, Question):
        problem = answer_problem(question, answer)
        if problem:
            return None, problem
    return answer, None


def _number(raw: str, integer: bool) -> int | float | None:
    """A number field's value as JSON would have it, or None: NaN (which every bound lets through, and which
    reached the upstream as null) and infinities are no JSON numbers."""
    if integer:
        return int(raw) if INTEGER.fullmatch(raw) else None
    if not NUMBER.fullmatch(raw):
        return None
    value = float(raw)
    return value if math.isfinite(value) else None
