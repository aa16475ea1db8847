"""The output schema most tools declare, checked without a schema walk: an object of named scalars.

The SDK gives every tool that returns a value the same schema (``{"type": "object", "properties": {"result":
{"type": "string", "title": ...}}, "required": ["result"], "title": ...}``), and checking a result against it
with jsonschema under the outside-schema work bound (``core/outside_schema.py``) costs ~80 Python calls a
forwarded call. For a schema of exactly that kind (an object; properties each of one scalar type; required
names; titles and descriptions; nothing else) ``plan`` says what to look at, and ``fits`` says a value fits
(JSON Schema 2020-12's types: an integer is also a float with no fraction, a boolean is never a number). It
only ever says "fits": a value it does not pass is checked by the full validator, whose error is the one told,
so a verdict can never differ from the validator's.
"""

from __future__ import annotations

from typing import Any

# property name -> its one JSON type; the names required
Plan = tuple[tuple[tuple[str, str], ...], tuple[str, ...]]

_ANNOTATIONS = frozenset({"title", "description"})
_TOP_KEYS = frozenset({"type", "properties", "required"}) | _ANNOTATIONS
_PROPERTY_KEYS = frozenset({"type"}) | _ANNOTATIONS
_SCALARS = frozenset({"string", "integer", "number", "boolean", "null"})


def plan(schema: Any) -> Plan | None:
    """What ``fits`` looks at for ``schema``, or None when it is not a flat object of scalars."""
    if type(schema) is not dict or not schema.keys() <= _TOP_KEYS or schema.get("type") != "object":
        return None
    if not _annotations_ok(schema):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if type(properties) is not dict or type(required) is not list:
        return None
    if not all(type(n) is str for n in required) or len(set(required)) != len(required):
        return None
    types = []
    for name, sub in properties.items():
        if type(sub) is not dict or not sub.keys() <= _PROPERTY_KEYS or not _annotations_ok(sub):
            return None
        kind = sub.get("type")
        if type(kind) is not str or kind not in _SCALARS:
            return None
        types.append((name, kind))
    return tuple(types), tuple(required)


def fits(p: Plan, value: Any) -> bool:
    """Whether ``value`` fits the schema ``p`` was planned from (False: not known here; ask the validator)."""
    if type(value) is not dict:
        return False
    types, required = p
    for name in required:
        if name not in value:
            return False
    for name, kind in types:
        if name in value and not _is(kind, value[name]):
            return False
    return True


def _is(kind: str, v: Any) -> bool:
    t = type(v)
    if kind == "string":
        return t is str
    if kind == "integer":
        return t is int or (t is float and v.is_integer())
    if kind == "number":
        return t is int or t is float
    if kind == "boolean":
        return t is bool
    return v is None


def _annotations_ok(schema: dict[str, Any]) -> bool:
    return all(type(schema[k]) is str for k in _ANNOTATIONS if k in schema)
