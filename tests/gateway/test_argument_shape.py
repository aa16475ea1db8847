"""``argument_shape`` on its own: what is filled, what is refused, and its bounds (the subprocess tests beside
it, ``test_guard_argument_defaults.py`` and ``test_undeclared_arguments.py``, show the guard and upstream)."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, walk_value
from sentinel_mcp.gateway.argument_form import argument_form
from sentinel_mcp.gateway.argument_shape import MAX_FILLED, PLAIN, Shape, compile_shape, shaped, walk_after


def _shape(schema: dict[str, Any]) -> Shape:
    return compile_shape(schema, outside_schema.validator(schema))


def test_a_float_default_is_the_integer_the_guard_sees() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 2.0},
                                               "o": {"type": "object", "default": {"a": 1, "b": 1.0}}}}
    shape = _shape(schema)
    args: dict[str, Any] = {}
    walk = walk_value({"x": "y"}, MAX_ARGUMENT_DEPTH)  # a call's walk that found no float
    filled, problem = shaped(shape, args)
    assert problem is None
    formed, problem = argument_form(schema, filled, walk_after(shape, walk))
    assert problem is None and formed == {"n": 2, "o": {"a": 1, "b": 1}}
    assert type(formed["n"]) is int and type(formed["o"]["b"]) is int


def test_a_default_is_copied_never_shared_between_calls() -> None:
    shape = _shape({"type": "object", "properties": {"tags": {"type": "array", "default": []}}})
    first, _ = shaped(shape, {})
    first["tags"].append("x")
    second, _ = shaped(shape, {})
    assert second == {"tags": []}


def test_defaults_the_schema_refuses_are_not_filled() -> None:
    shape = _shape({"type": "object", "properties": {
        "a": {"type": "string", "default": None}, "b": {"type": "integer", "default": "1"},
        "c": {"enum": ["x", "y"], "default": "z"}, "d": {"type": "string", "default": "ok"}}})
    assert shaped(shape, {}) == ({"d": "ok"}, None)


def test_a_recursive_model_compiles_and_fills_only_what_the_arguments_hold() -> None:
    schema = {"$ref": "#/$defs/N", "$defs": {"N": {"type": "object", "properties": {
        "v": {"type": "integer", "default": 0}, "next": {"$ref": "#/$defs/N"}}}}}
    shape = _shape(schema)
    assert shaped(shape, {"next": {"next": {}}}) == ({"v": 0, "next": {"v": 0, "next": {"v": 0}}}, None)
    assert "next/next/x" in (shaped(shape, {"next": {"next": {"x": 1}}})[1] or "")


def test_defaults_holding_defaults_cannot_fan_out() -> None:
    # each level's two defaults are objects of the next level: 2**32 objects if filled without a bound
    defs = {f"L{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/L{i + 1}", "default": {}},
                                                        "b": {"$ref": f"#/$defs/L{i + 1}", "default": {}}}}
            for i in range(40)}
    defs["L40"] = {"type": "object"}
    shape = _shape({"$ref": "#/$defs/L0", "$defs": defs})
    _, problem = shaped(shape, {})
    assert problem is not None and (str(MAX_FILLED) in problem or "deeper" in problem), problem


def test_several_object_branches_declare_their_keys_and_fill_nothing() -> None:
    shape = _shape({"type": "object", "properties": {"p": {"oneOf": [
        {"type": "object", "properties": {"card": {"type": "string", "default": "visa"}},
         "additionalProperties": False},
        {"type": "object", "properties": {"iban": {"type": "string"}}, "additionalProperties": False}]}}})
    assert shaped(shape, {"p": {"iban": "x"}}) == ({"p": {"iban": "x"}}, None)
    assert shaped(shape, {"p": {}}) == ({"p": {}}, None)
    assert "p/evil" in (shaped(shape, {"p": {"evil": 1}})[1] or "")


def test_open_schemas_are_plain() -> None:
    for schema in ({}, {"type": "object"}, {"type": "object", "additionalProperties": True},
                   {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
                   {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}):
        shape = compile_shape(schema, None)
        assert shape is PLAIN or shape.plain or shape.declared is None, schema


# a card or a bank account, as pydantic writes a union of two models (no additionalProperties: its models
# ignore other keys, while a server spreading the object acts on them)
UNION = {"type": "object", "properties": {"method": {"oneOf": [
    {"type": "object", "properties": {"kind": {"const": "card"}, "number": {"type": "string"},
                                      "save": {"type": "boolean", "default": False}}, "required": ["kind"]},
    {"type": "object", "properties": {"kind": {"const": "bank"}, "iban": {"type": "string"},
                                      "instant": {"type": "boolean", "default": True}}, "required": ["kind"]},
]}}}


def test_a_key_counts_as_declared_only_by_a_branch_the_value_matches() -> None:
    shape = _shape(UNION)
    for both in ({"kind": "card", "number": "4", "iban": "DE1"},
                 {"kind": "bank", "iban": "DE1", "number": "4"}, {"kind": "card", "instant": False},
                 {"kind": "bank", "save": True},
                 {"kind": "card", "iban": "DE1", "instant": True, "save": True}):
        assert not outside_schema.errors(outside_schema.validator(UNION), {"method": both})  # valid
        problem = shaped(shape, {"method": both})[1] or ""
        assert "is not one the tool declares" in problem and "method/" in problem, (both, problem)
        assert shaped(shape, {"method": both}, "drop")[0]["method"].keys() <= {"kind", "number", "save",
                                                                               "iban", "instant"}
    dropped = shaped(shape, {"method": {"kind": "card", "number": "4", "iban": "DE1"}}, "drop")[0]
    assert dropped == {"method": {"kind": "card", "number": "4", "save": False}}
    for spelling in ("Iban", "iban ", "i\u200bban", "IBAN", "evil"):
        problem = shaped(shape, {"method": {"kind": "card", spelling: "x"}})[1] or ""
        assert "is not one the tool declares" in problem, spelling


def test_the_one_branch_a_value_matches_fills_its_defaults() -> None:
    shape = _shape(UNION)
    assert shaped(shape, {"method": {"kind": "card", "number": "4"}}) == (
        {"method": {"kind": "card", "number": "4", "save": False}}, None)
    assert shaped(shape, {"method": {"kind": "bank", "iban": "DE1"}}) == (
        {"method": {"kind": "bank", "iban": "DE1", "instant": True}}, None)
    assert shaped(shape, {"method": {"kind": "bank", "iban": "DE1", "instant": False}}) == (
        {"method": {"kind": "bank", "iban": "DE1", "instant": False}}, None)


def test_a_value_several_branches_match_fills_nothing_and_declares_their_keys() -> None:
    schema = {"type": "object", "properties": {"p": {"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string", "default": "x"}}},
        {"type": "object", "properties": {"b": {"type": "string", "default": "y"}}}]}}}
    shape = _shape(schema)
    assert shaped(shape, {"p": {}}) == ({"p": {}}, None)  # both match: which the upstream reads is its own
    assert shaped(shape, {"p": {"a": "1", "b": "2"}}) == ({"p": {"a": "1", "b": "2"}}, None)
    assert "p/c" in (shaped(shape, {"p": {"a": "1", "c": "3"}})[1] or "")


def test_a_default_that_makes_the_value_match_another_branch_is_refused() -> None:
    # the first branch alone matches {} (the second needs "t"), and its default adds "t": then both match
    schema = {"type": "object", "properties": {"p": {"oneOf": [
        {"type": "object", "properties": {"t": {"type": "string", "default": "x"}}, "maxProperties": 1},
        {"type": "object", "properties": {"t": {"type": "string"}}, "required": ["t"]}]}}}
    shape = _shape(schema)
    problem = shaped(shape, {"p": {}})[1] or ""
    assert "another of its branches" in problem, problem
