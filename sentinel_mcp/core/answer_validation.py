"""What counts as an answer, and what counts as an approval.

An answer's content must validate against the schema of the question Sentinel sent, strictly: JSON types
as they are (the string "true" is not a boolean, the number 1 is not ``true``, "1" is not a number), enums,
required fields, and no field the question did not ask for. Anything else is "not answered": the call does
not go ahead, and the caller is told which field was wrong and what was expected.

An approval (a confirmation or consent question) is given only by the answer ``accept`` whose required boolean
field is JSON ``true`` (optional booleans, such as a consent's "remember", are choices, not the approval).
``false``, a decline or a cancel all mean "no" for this call, and nothing is stored.
"""

from __future__ import annotations

import functools
import json
import math
import unicodedata
from typing import TYPE_CHECKING, Any

from sentinel_mcp.core.decision import Answer, Deny, Question
from sentinel_mcp.core.display_text import Marked, compose, safe_text
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.core.given_fact_size import size_problem
from sentinel_mcp.core.json_numbers import NumberTooLarge, integral_as_int

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.outside_schema import TooCostly, TooLargeSchema, UnusableSchema

if TYPE_CHECKING:  # jsonschema is imported by the first answer checked, not at start-up (issue 21)
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

# the default guard's and the policy's confirmations, and the consent gate's questions
APPROVAL_KINDS = ("confirmation", "confirm", "consent")


class AnswerNotAccepted(Deny):
    """A Deny because an answer did not fit its question (wrong type, not asked, wrong provenance)."""


class BrokenSchema(GatewayError):
    """The question's own schema cannot be checked: invalid, a reference outside itself, a pattern that cannot
    run in linear time (an upstream's question is outside input: ``core/outside_schema.py``)."""


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Validator | None:
    """None: a form too large to check here (an upstream's: the upstream checks what it is answered, as it
    judges a tool's arguments Sentinel cannot check; Sentinel's own questions are a few fields)."""
    schema = json.loads(schema_json)
    try:
        return outside_schema.validator(_closed(schema))
    except TooLargeSchema:
        return None
    except UnusableSchema as e:
        raise BrokenSchema(str(e)) from None


def _closed(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with no room for fields it does not name (elicitation forms are flat objects)."""
    if schema.get("type") == "object" and "additionalProperties" not in schema:
        return {**schema, "additionalProperties": False}
    return schema


def _answered_part(schema: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """The part of a form's schema the answer's fields fall under (no field it does not name)."""
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    return {"type": "object", "properties": {k: props[k] for k in content if k in props}}


def content_problem(schema: dict[str, Any] | None, content: Any) -> str | None:
    """Why ``content`` does not answer a question with ``schema`` (None when it does).

    Raises ``BrokenSchema`` when the schema itself is invalid (the caller decides: ours never is); an answer
    too costly to check against it (``outside_schema.TooCostly``) is a problem, never an answer.
    """
    schema = schema if isinstance(schema, dict) else {"type": "object"}
    if not isinstance(content, dict):
        return compose("the answer must be an object with the question's fields, got ", _kind(content))
    validator = _validator(json.dumps(schema, sort_keys=True, default=str))
    if validator is None:  # too large to check whole: the fields answered are (the asker judges the rest)
        validator = _validator(json.dumps(_answered_part(schema, content), sort_keys=True, default=str))
        if validator is None:
            return None
    try:
        found = outside_schema.errors(validator, content)
    except UnusableSchema as e:
        raise BrokenSchema(str(e)) from None
    except TooCostly as e:  # no verdict is not a yes: the answer does not count
        return f"the answer cannot be checked against the question's schema ({e})"
    errors = sorted(found, key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    return _describe(errors[0], schema) if errors else None


def answer_problem(question: Question, answer: Answer) -> str | None:
    """Why ``answer`` cannot count as the answer to ``question`` (None when it can)."""
    allowed = question.meta.get("from") or ["user"]
    if answer.provenance not in allowed:
        who = " or ".join(allowed)
        return (
            f"this question must be answered by the {who} (an answer from the {answer.provenance} is not "
            "accepted)"
        )
    if answer.action != "accept":
        return None  # a decline or a cancel needs no content
    if (too_large := size_problem(answer.content)) is not None:  # before any schema walks it
        return too_large
    if (not_text := _text_problem(answer.content)) is not None:  # before it is composed (NFC)
        return not_text
    content = composed(answer.content)
    try:
        problem = content_problem(question.requested_schema, content)
    except BrokenSchema as e:  # our questions always have valid schemas: refuse rather than guess
        return f"the question's schema is invalid ({e})"
    return problem or _number_problem(content) or _exactly_one_problem(question, content)


def composed(content: Any) -> Any:
    """An answer's content with each text in Unicode's composed form (NFC): what is judged and kept as a fact.

    Why composed, not refused as a tool's argument is (``wire_limits.one_text``): an answer to Sentinel's own
    question is a fact the guard compares, never forwarded to a tool, so there is no second reader to act on
    the text as sent; and a person cannot see the difference nor choose it (macOS's and some keyboards' input,
    a name pasted from a file listing, give "Mi" + "a" + U+0301 for "Mía"), so a refusal would ask again for
    what they already typed. Composed, the answer is the canonical equivalent a record holds (a tool's
    arguments are NFC), so a rule's comparison with the record is exact; kept decomposed, an NFD "Mía" did
    not equal the record's "Mía" and a rule on "the same person" read another. Compatibility forms (full-width
    letters, ligatures) are NFC and kept, as in arguments. A text not Unicode (a lone surrogate) is refused
    first (``_text_problem``). Forms are flat: the top level's texts; a list of texts (multi-select) too."""
    if not isinstance(content, dict):
        return content
    out: dict[str, Any] | None = None
    for k, v in content.items():
        if isinstance(v, str):
            new: Any = v if v.isascii() else unicodedata.normalize("NFC", v)
        elif isinstance(v, list) and any(isinstance(i, str) and not i.isascii() for i in v):
            new = [unicodedata.normalize("NFC", i) if isinstance(i, str) else i for i in v]
        else:
            continue
        if new != v or type(new) is not type(v):
            out = out if out is not None else dict(content)
            out[k] = new
    return content if out is None else out


def relayed_problem(schema: dict[str, Any] | None, content: Any) -> str | None:
    """Why ``content`` does not answer an upstream's form (None when it does): the one rule for an answer
    relayed in either era (pushed on to a handshake client, or given in a 2026-era client's round): the
    form's schema, strictly, and the numbers and text an answer to Sentinel's own question may hold (1e300
    answered "an integer" reached the tool as a float, and its SDK made it an integer of 301 digits)."""
    try:
        problem = content_problem(schema, content)
    except BrokenSchema:
        problem = None  # the upstream's own schema is broken; it judges its own input
    return problem or _number_problem(content) or _text_problem(content)


def _number_problem(content: Any) -> str | None:
    """An integral number counts as the integer it equals (``json_numbers``): one whose integer is longer than
    the wire takes (``1e300``) is no answer, as it is no argument. NaN and the infinities are no JSON
    number: the wire refuses them, and an answer that reaches the guard without crossing it (``PolicyService``
    called in process) is refused here too, or the schema's ``number`` took them and the fact held the atom
    ``nan``."""
    if isinstance(content, dict):
        for v in content.values():
            if isinstance(v, float) and not math.isfinite(v):
                return compose("the number ", repr(v), " is not a JSON number")
    try:
        integral_as_int(content)
    except NumberTooLarge as e:
        return str(e)
    return None


def _text_problem(content: Any) -> str | None:
    """A text answer is Unicode text: a lone surrogate (possible in process, or from a JSON parser that lets
    ``\\ud800`` through) is no character, and the fact kept another text than the one given."""
    if isinstance(content, dict):
        for v in content.values():
            if isinstance(v, str):
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return "the answer is not Unicode text (it holds a lone surrogate)"
    return None


def _exactly_one_problem(question: Question, content: Any) -> str | None:
    """A question whose fields are alternatives (an answer, or "I don't know") takes exactly one of them; a
    checkbox alternative counts only when it is true (a choice of booleans is given by its false too)."""
    fields = question.meta.get("exactly_one")
    if not fields or not isinstance(content, dict):
        return None
    props = question.requested_schema.get("properties") or {}

    def checkbox(f: str) -> bool:
        spec = props.get(f)
        return isinstance(spec, dict) and spec.get("type") == "boolean" and "oneOf" not in spec

    given = [f for f in fields if f in content and (content[f] is not False or not checkbox(f))]
    if len(given) == 1:
        return None
    names = " or ".join(repr(f) for f in fields)
    if not given:
        return f"nothing was answered: give {names}"
    return f"give only one of {names}, not both"


def is_approval(question: Question) -> bool:
    return question.meta.get("kind") in APPROVAL_KINDS


def approves(question: Question, answer: Answer) -> bool:
    """True only for a valid ``accept`` with the question's approval field(s) exactly JSON ``true``: its
    required booleans (all its booleans when none is required)."""
    if answer.action != "accept" or not isinstance(answer.content, dict) or answer_problem(question, answer):
        return False
    schema = question.requested_schema
    fields = [
        k
        for k, v in (schema.get("properties") or {}).items()
        if isinstance(v, dict) and v.get("type") == "boolean"
    ]
    required = [k for k in fields if k in (schema.get("required") or [])]
    fields = required or fields
    return bool(fields) and all(answer.content.get(k) is True for k in fields)


def goes_ahead(question: Question, answer: Answer) -> bool:
    """Whether a (valid) answer lets the call continue: accepted, and for an approval, ``true``."""
    return approves(question, answer) if is_approval(question) else answer.action == "accept"


def _describe(error: ValidationError, schema: dict[str, Any]) -> Marked:
    """One marked text (the schema's words and the answer's values marked, Sentinel's kept): shown again
    with a question, a real hidden character reads as one ``⟨U+XXXX⟩``, never as a typed-out one."""
    path = list(error.absolute_path)
    where = compose("field ", Marked(repr(safe_text(str(path[0]), 60)))) if path else Marked("the answer")
    asked = sorted((schema.get("properties") or {}).keys())
    if error.validator == "required":
        missing = [p for p in error.validator_value if p not in (error.instance or {})]
        return compose("field ", Marked(repr(safe_text(", ".join(missing), 120))), " is missing (asked: ",
                       ", ".join(asked), ")")
    if error.validator == "additionalProperties" and not path:
        extra = sorted(set(error.instance) - set(asked))
        return compose(
            f"field{'s' if len(extra) != 1 else ''} ", safe_text(", ".join(map(str, extra)), 200),
            f" {'were' if len(extra) != 1 else 'was'} not asked for (asked: ", ", ".join(asked) or "nothing",
            ")",
        )
    if error.validator == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else str(expected)
        hint = " (JSON true or false)" if expected == "boolean" else ""
        return compose(where, ": expected a ", expected, hint, ", got ", _kind(error.instance))
    if error.validator == "oneOf" and all(
        isinstance(o, dict) and "const" in o for o in error.validator_value
    ):
        choices = ", ".join(json.dumps(o["const"], ensure_ascii=False) for o in error.validator_value)
        return compose(where, ": expected one of ", safe_text(choices, 400), ", got ", _kind(error.instance))
    if error.validator == "enum":
        choices = ", ".join(json.dumps(c, ensure_ascii=False) for c in error.validator_value)
        return compose(where, ": expected one of ", safe_text(choices, 400), ", got ", _kind(error.instance))
    return compose(where, ": ", safe_text(error.message, 300))


def _kind(value: Any) -> Marked:
    names = {
        bool: "boolean",
        int: "number",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
        type(None): "null",
    }
    kind = names.get(type(value), type(value).__name__)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return compose("the ", kind, " ", safe_text(text, 60))
