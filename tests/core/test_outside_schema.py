"""core/outside_schema.py on its own: what an outside schema may make the checker do (nothing but check), and
that its verdicts are JSON Schema's. The gateway's use of it: tests/gateway/test_outside_schemas.py."""

from __future__ import annotations

import pytest

from sentinel_mcp.core import outside_schema
from sentinel_mcp.core.answer_validation import BrokenSchema, content_problem
from sentinel_mcp.core.outside_schema import UnusableSchema
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
