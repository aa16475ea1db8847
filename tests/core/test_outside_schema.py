"""core/outside_schema.py on its own: what an outside schema may make the checker do (nothing but check), and
that its verdicts are JSON Schema's. The gateway's use of it: tests/gateway/test_outside_schemas.py."""

from __future__ import annotations

import pytest

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.answer_validation import BrokenSchema, content_problem
from sentinel_mcp.core.outside_schema import TooCostly, UnusableSchema
from tests.gateway.test_outside_schemas import HOURS, Listener

pytestmark = pytest.mark.timeout(60)


def verdicts(schema, *instances):
    checker = outside_schema.validator(schema)
    return [not outside_schema.errors(checker, i) for i in instances]


@pytest.mark.parametrize("ref", [
    "http://127.0.0.1:{port}/schema.json", "https://example.invalid/x.json", "file:///etc/passwd#/a",
    "//127.0.0.1:{port}/x", "urn:anything", "schema.json", "../x.json#/a",
])
@pytest.mark.parametrize("key", ["$ref", "$dynamicRef"])
def test_a_reference_outside_the_schema_is_refused_and_never_fetched(ref, key):
    listener = Listener()
    try:
        port = listener.server.server_address[1]
        schema = {"type": "object", "properties": {"q": {key: ref.format(port=port)}}}
        with pytest.raises(UnusableSchema, match="points outside the schema"):
            outside_schema.validator(schema)
        with pytest.raises(BrokenSchema):  # an upstream's question with it: no answer counts
            content_problem(schema, {"q": "x"})
        schema["$id"] = listener.url  # a base URI does not make a relative reference fetchable
        with pytest.raises(UnusableSchema):
            outside_schema.validator({**schema, "properties": {"q": {"$ref": "other.json"}}})
    finally:
        listener.close()
    assert listener.requests == []


def test_references_inside_the_schema_still_work():
    schema = {"$defs": {"n": {"type": "integer"}}, "type": "object",
              "properties": {"q": {"$ref": "#/$defs/n"}}}
    assert verdicts(schema, {"q": 1}, {"q": "1"}) == [True, False]
    # words that only look like keywords are data: a property named "$ref", an enum holding one
    schema = {"type": "object", "properties": {"$ref": {"enum": [{"$ref": "http://x/"}]}}}
    assert verdicts(schema, {"$ref": {"$ref": "http://x/"}}, {"$ref": 1}) == [True, False]


def test_patterns_run_in_linear_time_with_the_same_verdicts():
    schema = {"pattern": "^([a-z ]+)+$"}  # a pattern says nothing of values that are not strings
    assert verdicts(schema, HOURS, HOURS[:-1], 5) == [False, True, True]
    keyed = {"type": "object", "patternProperties": {"^([a-z]+)+$": {"type": "integer"}}}
    key = HOURS.replace(" ", "")
    assert verdicts(keyed, {key: "x"}, {key[:-1]: "x"}, {key[:-1]: 1}) == [True, False, True]
    assert "does not match" in content_problem(
        {"type": "object", "properties": {"w": {"type": "string", "pattern": "^([a-z ]+)+$"}}}, {"w": HOURS})


@pytest.mark.parametrize("pattern", ["^(?=a)a$", "(a)\\1", "(?<!x)y", "^([a-z]{1,50}){1,1000}$"])
def test_a_pattern_re2_cannot_run_makes_the_schema_unusable(pattern):
    for schema in ({"type": "string", "pattern": pattern}, {"patternProperties": {pattern: {}}},
                   {"type": "array", "items": {"pattern": pattern}}):
        with pytest.raises(UnusableSchema, match="linear time"):
            outside_schema.validator(schema)


def test_unique_items_is_linear_and_keeps_json_schema_equality():
    schema = {"type": "array", "uniqueItems": True}
    assert verdicts(schema, [{"k": i} for i in range(50_000)]) == [True]
    same = [[1, 1.0], [{"a": [1]}, {"a": [1.0]}], [{"a": 1, "b": 2}, {"b": 2, "a": 1}], [None, None],
            ["x", "x"]]
    differ = [[True, 1], [False, 0], [1, "1"], [[1, 2], [2, 1]], [{"a": True}, {"a": 1}], [None, False],
              [[], {}]]
    assert verdicts(schema, *same) == [False] * len(same)
    assert verdicts(schema, *differ) == [True] * len(differ)


def test_a_schema_that_refers_to_itself_without_end_is_unusable_not_a_crash():
    schema = {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    try:
        checker = outside_schema.validator(schema)
    except UnusableSchema:
        return
    with pytest.raises(UnusableSchema):
        outside_schema.errors(checker, {})


def fan_out(levels, combinator="anyOf", **extra):
    """A small schema whose check branches in two at each of ``levels`` levels through local references:
    2^levels subschemas applied to one value (40 levels: a trillion)."""
    defs = {f"l{i}": {combinator: [{"$ref": f"#/$defs/l{i + 1}"}, {"$ref": f"#/$defs/l{i + 1}"}]}
            for i in range(levels)}
    defs[f"l{levels}"] = {"type": "integer"}
    return {"$defs": defs, "type": "object", "properties": {"q": {"$ref": "#/$defs/l0"}}, **extra}


@pytest.mark.parametrize("schema", [
    fan_out(40, "anyOf"), fan_out(40, "allOf"), fan_out(40, "oneOf"),
    fan_out(40, "allOf", unevaluatedProperties=False),  # its own walk of the branches
    {"type": "object", "properties": {"q": {"not": {"$ref": "#/$defs/l0"}}}, "$defs": fan_out(40)["$defs"]},
])
@pytest.mark.parametrize("value", ["x", "x" * 100_000])
def test_a_schema_that_fans_out_is_stopped_by_the_work_bound(schema, value):
    checker = outside_schema.validator(schema)  # local references only: a usable schema
    with pytest.raises(TooCostly, match="steps"):
        outside_schema.errors(checker, {"q": value})
    problem = content_problem(schema, {"q": value})  # an answer to such a question does not count
    assert problem is not None and "cannot be checked" in problem


def test_errors_quoting_a_large_value_are_paid_for():
    # a thousand failing branches, each error quoting the 500 kB value: 500 MB of messages before the bound
    schema = {"type": "object", "properties": {"q": {"anyOf": [{"type": "integer"}, {"enum": [1, 2]}] * 500}}}
    with pytest.raises(TooCostly):
        outside_schema.errors(outside_schema.validator(schema), {"q": "x" * 500_000})


def test_a_pattern_search_is_paid_for_by_its_program_and_the_string():
    # RE2 is linear in the string, but this program (3,000 instructions) overflows its DFA: the fallback is
    # linear in both, about 1.4 s per pattern here; two hundred of them over the same string before the bound
    slow = "[ab]*a[ab]{999}c|[cd]*c[cd]{999}e|[ef]*e[ef]{999}g"
    schema = {"type": "object", "properties": {"q": {"allOf": [{"pattern": slow}] * 200}}}
    text = "ab" * 100_000
    with pytest.raises(TooCostly):
        outside_schema.errors(outside_schema.validator(schema), {"q": text})
    assert verdicts({"pattern": slow}, "ab" * 500) == [False]  # a short string is still checked


def test_the_work_bound_leaves_large_legitimate_values_checked():
    numbers = {"type": "object", "properties": {"a": {"type": "array", "items": {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 3}]}}}}
    assert verdicts(numbers, {"a": list(range(100_000))}, {"a": [1] * 99_999 + ["long"]}) == [True, False]
    positive = {"type": "array", "items": {"type": "integer", "minimum": 0}}
    found = outside_schema.errors(outside_schema.validator(positive), [-1] * 50_000)
    assert len(found) == 50_000  # every error of a large invalid value, not "too costly"
    address = "^[a-z0-9._%+-]{1,64}@[a-z0-9.-]{1,255}$"
    email = {"type": "array", "items": {"type": "string", "pattern": address}}
    assert verdicts(email, ["someone.x@example.com"] * 20_000, ["a@b"] * 9_999 + ["nope"]) == [True, False]


def test_a_validator_used_outside_errors_has_no_work_to_spend():
    checker = outside_schema.validator({"type": "integer"})
    with pytest.raises(TooCostly):
        list(checker.iter_errors(1))
    assert outside_schema.errors(checker, 1) == []


@pytest.mark.parametrize("name", ["enum", "const", "default", "examples"])
def test_a_property_named_like_a_value_keyword_still_has_its_subschema_checked(name, tmp_path):
    for sub in ({"$ref": "http://127.0.0.1:9/x.json"}, {"$ref": f"file://{tmp_path}/x.json"},
                {"type": "string", "pattern": "^(?=a)a$"}):
        for schema in ({"type": "object", "properties": {name: sub}}, {"$defs": {name: sub}},
                       {"patternProperties": {"^x$": {"properties": {name: sub}}}},
                       {"dependentSchemas": {name: {"properties": {"q": sub}}}}):
            with pytest.raises(UnusableSchema):  # refused when compiled, never met when a call arrives
                outside_schema.validator(schema)


@pytest.mark.parametrize("depth", [100, 150, 1_000, 5_000])
def test_a_schema_nested_deep_is_unusable_never_a_recursion_error(depth):
    """The metaschema check recursed past Python's limit at ~150 levels before the depth bound was walked:
    a RecursionError, not the schema's problem, escaped to callers that expect ``UnusableSchema``."""
    from sentinel_mcp.llm.errors import SchemaError
    from sentinel_mcp.llm.schema_grammar import compile_schema

    schema: dict = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    with pytest.raises(outside_schema.UnusableSchema, match="nested"):
        outside_schema.validator(schema)
    with pytest.raises(SchemaError):
        compile_schema(schema)
