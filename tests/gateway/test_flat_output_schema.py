"""``flat_output_schema`` says "fits" only where the outside-schema validator finds no error: the same
verdict for every schema it plans, on values at each type's edges (bool vs int, 1.0 vs integer, NaN, None,
missing and extra keys), and no plan for a schema with anything else in it (so the full walk checks it)."""

from __future__ import annotations

import itertools
import json
import math
from typing import Any

import pytest

from sentinel_mcp.core import outside_schema
from sentinel_mcp.gateway.flat_output_schema import fits, plan

KINDS = ["string", "integer", "number", "boolean", "null"]
VALUES: list[Any] = ["", "x", 0, 1, -7, 2**70, 1.0, 1.5, -0.0, math.nan, math.inf, True, False, None, [], {},
                     [1], {"a": 1}, "1"]


def _schemas() -> list[dict[str, Any]]:
    out = []
    for a, b in itertools.product(KINDS, repeat=2):
        out.append({"type": "object", "properties": {"result": {"type": a, "title": "Result"}},
                    "required": ["result"], "title": "noopOutput"})
        out.append({"type": "object", "properties": {"a": {"type": a}, "b": {"type": b, "description": "d"}},
                    "required": ["a"]})
    out.append({"type": "object"})
    out.append({"type": "object", "properties": {}, "required": ["gone"]})
    return out


@pytest.mark.parametrize("schema", _schemas(), ids=lambda s: json.dumps(s, sort_keys=True)[:80])
def test_fits_only_where_the_validator_finds_no_error(schema: dict[str, Any]) -> None:
    p = plan(schema)
    assert p is not None, schema
    validator = outside_schema.validator(schema)
    names = list(dict.fromkeys([*schema.get("properties", {}), *schema.get("required", []), "other"]))
    checked = 0
    for values in itertools.product(VALUES + ["<absent>"], repeat=min(len(names), 2)):
        doc = {n: v for n, v in zip(names, values) if not (isinstance(v, str) and v == "<absent>")}
        size = len(json.dumps(doc, default=str))
        valid = not outside_schema.errors(validator, doc, size)
        if fits(p, doc):
            assert valid, (schema, doc)
            checked += 1
        # the plan is no looser and (for these shapes) no stricter: what the validator passes, it passes
        assert fits(p, doc) == valid, (schema, doc)
    assert checked > 0
    for not_object in (None, [], "x", 1, True):
        assert not fits(p, not_object)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"result": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "properties": {"result": {"type": "string", "enum": ["a"]}}},
    {"type": "object", "properties": {"result": {"type": "string", "pattern": "^a$"}}},
    {"type": "object", "properties": {"result": {"type": "string", "maxLength": 3}}},
    {"type": "object", "properties": {"result": {"type": ["string", "null"]}}},
    {"type": "object", "properties": {"result": {"type": "object"}}},
    {"type": "object", "properties": {"result": {"type": "array"}}},
    {"type": "object", "properties": {"result": True}},
    {"type": "object", "properties": {"result": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}},
    {"type": "object", "properties": {"result": {"type": "string", "title": 3}}},
    {"type": "object", "required": ["a", "a"]},
    {"type": "object", "required": [1]},
    {"type": "object", "required": "a"},
    {"type": "object", "title": ["x"]},
    {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"},
    {"type": "array"},
    {"type": ["object"]},
    {"properties": {"result": {"type": "string"}}},
    {"type": "object", "minProperties": 2},
    {"type": "object", "properties": {"result": {"type": "strnig"}}},
    [], "object", None, True,
])
def test_anything_else_in_a_schema_means_no_plan(schema: Any) -> None:
    assert plan(schema) is None
