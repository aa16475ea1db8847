"""The grammar's promise is re-checked by its consumer, type-strict: a prompt-injected (or hand-edited
grammar's) output that is not the JSON the grammar allows is an invalid output, never coerced into one.

Before: ``NaN`` passed every ``minimum``/``maximum`` of a caller's schema (a NaN compares false both ways),
``Infinity`` and ``1e999`` were read as numbers, a repeated key let the last of two answers win (what a
reader of the text saw first was not what the caller got), and the shipped grammars' models coerced
``"0.9"`` to a score, ``true`` to a step number and ``2.0`` to an element id."""

from __future__ import annotations

import pytest

from sentinel_mcp.llm.cortex import _parse_and_validate
from sentinel_mcp.llm.engine import Generation
from sentinel_mcp.llm.errors import OutputInvalid
from sentinel_mcp.llm.output_models import Plan, RiskAssessment, UiAction, VerifierReport

BOUNDED = {
    "type": "object",
    "properties": {"x": {"type": "number", "minimum": 0, "maximum": 10}},
    "required": ["x"],
}
OPEN = {"type": "object"}


def generation(text: str) -> Generation:
    return Generation(text, 1, 1, "stop", "m", "plain", 0.0, None)


@pytest.mark.parametrize("text", [
    '{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}', '{"x": 1e999}', '{"x": -1E+400}',
    '{"x": ' + "9" * 5000 + "}",  # past Python's int-from-text limit: a bare ValueError escaped before
])
@pytest.mark.parametrize("schema", [BOUNDED, OPEN], ids=["bounded", "open"])
def test_a_number_json_cannot_hold_is_invalid_output(text, schema):
    with pytest.raises(OutputInvalid, match="not a finite JSON number|digits"):
        _parse_and_validate(generation(text), None, schema)


@pytest.mark.parametrize("text,model,schema", [
    ('{"x": 1, "x": 99}', None, OPEN),
    ('{"x": 99, "x": 1}', None, BOUNDED),
    ('{"risk": "critical", "reasons": ["r"], "risk": "low"}', RiskAssessment, None),
    ('{"a": {"k": 1, "k": 2}}', None, OPEN),
], ids=["open", "bounded", "risk", "nested"])
def test_a_key_given_twice_is_invalid_output(text, model, schema):
    with pytest.raises(OutputInvalid, match="more than once"):
        _parse_and_validate(generation(text), model, schema)


@pytest.mark.parametrize("text,model", [
    ('{"warnings": [], "missing_items": [], "quality_score": "0.9"}', VerifierReport),
    ('{"steps": [{"step_number": true, "phase": "a", "file_path": "a", "file_type": "a", '
     '"dependencies": [], "description": "d"}]}', Plan),
    ('{"steps": [{"step_number": 1, "phase": "a", "file_path": "a", "file_type": "a", '
     '"dependencies": ["2"], "description": "d"}]}', Plan),
    ('{"action": "click", "snapshot_id": null, "element_id": 2.0, "reasoning": "r"}', UiAction),
    ('{"action": "click", "snapshot_id": null, "element_id": true, "reasoning": "r"}', UiAction),
], ids=["score-text", "step-bool", "dependency-text", "element-float", "element-bool"])
def test_a_grammar_model_coerces_nothing(text, model):
    with pytest.raises(OutputInvalid, match=f"does not match {model.__name__}"):
        _parse_and_validate(generation(text), model, None)


@pytest.mark.parametrize("text,model,schema", [
    ('{"x": 2.5}', None, BOUNDED),
    ('{"x": 10}', None, BOUNDED),
    ('{"warnings": [], "missing_items": [], "quality_score": 1}', VerifierReport, None),
    ('{"action": "click", "snapshot_id": "s-0123456789", "element_id": "e-0a1b2c3d", "reasoning": "r"}',
     UiAction, None),
    ('{"t": "tab\there"}', None, OPEN),  # a raw control character: schema grammars allow it in strings
], ids=["float", "int", "int-score", "ref", "control-char"])
def test_what_the_grammar_allows_still_reads(text, model, schema):
    assert _parse_and_validate(generation(text), model, schema) is not None


# Nesting is bounded where the output is read, not only where the parser gives up (about 1000 levels): an
# output 600 levels deep passed the cortex's checks, then no JSON encoder on its way to the caller could write
# it (pydantic's serializer stops at 512), so the call's answer failed after the check had passed it.
@pytest.mark.parametrize("depth", [33, 600, 900])
@pytest.mark.parametrize("schema", [OPEN, {"type": "array"}], ids=["object", "array"])
def test_an_output_nested_deeper_than_tool_arguments_may_is_invalid(depth, schema):
    inner = "[" * depth + "]" * depth
    text = '{"a": ' + inner + "}" if schema is OPEN else "[" + inner + "]"
    with pytest.raises(OutputInvalid, match="nested deeper than 32"):
        _parse_and_validate(generation(text), None, schema)


def test_an_output_as_deep_as_tool_arguments_may_be_still_reads():
    text = '{"a": ' + "[" * 30 + "]" * 30 + "}"  # 31 levels with the object
    assert _parse_and_validate(generation(text), None, OPEN) is not None


# A string grammar allows any \uXXXX escape, so a constrained output can write half a surrogate pair: text
# that is no Unicode, which passed every check and then no encoder could write to the caller (UTF-8 refuses
# it).
@pytest.mark.parametrize("text", [
    '{"a": "\\ud800"}', '{"a": "x\\udc00y"}', '{"\\udfff": 1}', '{"a": ["ok", {"b": "\\ud83d"}]}',
    '{"a": "\\ude00\\ud83d"}',  # a pair in the wrong order is two lone halves
])
def test_an_output_holding_half_a_surrogate_pair_is_invalid(text):
    with pytest.raises(OutputInvalid, match="not Unicode"):
        _parse_and_validate(generation(text), None, OPEN)


def test_an_escaped_surrogate_pair_and_plain_unicode_still_read():
    data = _parse_and_validate(generation('{"a": "\\ud83d\\ude00 caf\\u00e9 \u65e5"}'), None, OPEN)
    assert data == {"a": "\U0001f600 café \u65e5"}
