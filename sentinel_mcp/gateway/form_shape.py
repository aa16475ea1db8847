"""The shape of a form an upstream may have the user fill in through Sentinel: MCP's, a flat form.

MCP's ``requestedSchema`` is an object of primitive fields (text, a number, a yes or no, one or several of
listed choices), so a client can draw it and a person can read it. An upstream's form was relayed whatever
it held: a field that is itself a form, 10,000 fields, 100,000 choices, ``$ref``, formats no client knows,
each drawn (or not) as the client managed, and answered by the user in Sentinel's name. A form of another
shape is relayed to no one: a handshake-era upstream's push is refused and audited (cause ``not_a_form``), a
2026-era upstream's input request ends the call saying why. Each field's keys are not checked beyond its type
and format: the answer is checked against the whole schema as written (``answer_validation``), which is
bounded for any schema (``outside_schema``).

A form's ``default`` values pass as written (MCP's SEP-1034: the client shows them filled in; the
conformance suite checks they arrive).
"""

from __future__ import annotations

from typing import Any

from mcp.types import ElicitRequest, ElicitRequestFormParams

from sentinel_mcp.config import RemoteServer, StdioServer
from sentinel_mcp.core.shown_schema import voiced_form

MAX_FIELDS = 32
MAX_CHOICES = 256
FORMATS = frozenset({"email", "uri", "date", "date-time"})
NOT_A_FORM = "not_a_form"  # the refused push's cause (``push_refusals``)
_PRIMITIVES = frozenset({"string", "number", "integer", "boolean"})
_CHOICES = ("enum", "oneOf", "anyOf")


def form_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a form MCP defines (a flat object of primitive fields, within bounds), or
    None."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return "its form is not an object of fields"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return "its form's fields are not an object"
    if len(properties) > MAX_FIELDS:
        return f"its form has {len(properties)} fields; at most {MAX_FIELDS} are relayed"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) and r in properties for r in required):
        return "its form requires fields it does not have"
    for name, field in properties.items():
        problem = _field_problem(field)
        if problem is not None:
            return f"its field {name[:40]!r} {problem}"
    return voiced_form(schema)  # (shown_schema: a value cannot be marked as the server's)


def _field_problem(field: Any) -> str | None:
    if not isinstance(field, dict):
        return "is not a field"
    kind = field.get("type")
    if kind == "array":  # several of listed choices (a multi-select): its items are the choices
        items = field.get("items")
        if not isinstance(items, dict) or not any(k in items for k in _CHOICES):
            return "is a list of something other than choices"
        return _choices_problem(items) or _choices_problem(field)
    if kind not in _PRIMITIVES:
        return "is not text, a number or a yes or no (MCP's forms are flat)"
    form = field.get("format")
    if form is not None and form not in FORMATS:
        return "has a format MCP's forms do not define"
    return _choices_problem(field)


def _choices_problem(field: dict[str, Any]) -> str | None:
    for key in _CHOICES:
        choices = field.get(key)
        if choices is not None and (not isinstance(choices, list) or len(choices) > MAX_CHOICES):
            return f"has more than {MAX_CHOICES} choices, or choices that are no list"
    return None


def configured_form_problem(target: Any, params: Any) -> str | None:
    """Why a configured server's question is relayed to no one (a form of another shape), or None; a
    built-in is Sentinel's own code, as in ``relay_permits``: its forms are its own."""
    if not isinstance(target, (StdioServer, RemoteServer)) or not isinstance(params, ElicitRequestFormParams):
        return None
    return form_problem(params.requested_schema)


def unshaped_request(target: Any, requests: dict[str, Any] | None) -> str | None:
    """Why a 2026-era upstream's input requests are relayed to no one (a form of another shape), or None."""
    for request in (requests or {}).values():
        if isinstance(request, ElicitRequest):
            problem = configured_form_problem(target, request.params)
            if problem is not None:
                return f"the upstream's question is not relayed: {problem}"
    return None
