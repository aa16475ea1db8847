"""ArgumentCheck's verdicts are jsonschema's, exactly, also on its shortcuts (issue 21): ``{}`` is judged once
per tool (its verdict depends on the schema only) and the size is measured with an encoder built once. A
corpus of schemas and arguments is checked against the plain algorithm (jsonschema on every call)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from mcp.types import Tool

from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, value_problem, walk_value
from sentinel_mcp.gateway.argument_check import ArgumentCheck

SCHEMAS: list[dict[str, Any]] = [
    {},
    {"type": "object"},
    {"type": "object", "properties": {}},
    {"type": "object", "properties": {"a": {"type": "integer", "default": 1}}},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"type": "object", "required": []},
    {"type": "object", "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "minProperties": 1},
    {"type": "object", "maxProperties": 0},
    {"type": ["object", "null"]},
    {"type": "string"},
    {"type": "array"},
    {"not": {"type": "object"}},
    {"not": {}},
    {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"allOf": [{"type": "object"}, {"required": ["x"]}]},
    {"oneOf": [{"type": "object"}, {"maxProperties": 0}]},
    {"if": {"maxProperties": 0}, "then": {"required": ["z"]}},
    {"dependentRequired": {"a": ["b"]}},
    {"$ref": "#/$defs/x", "$defs": {"x": {"required": ["a"]}}},
    {"$ref": "#/$defs/x", "$defs": {"x": {"type": "object"}}},
    {"enum": [{}]},
    {"enum": [{"a": 1}]},
    {"const": {}},
    {"const": {"a": 1}},
    {"propertyNames": {"maxLength": 1}},
    {"unevaluatedProperties": False},
    {"type": 5},  # broken: the upstream judges its own input
    {"required": "a"},  # broken
    {"properties": {"a": {"type": "nope"}}},  # broken
]
ARGUMENTS: list[Any] = [
    None, {}, {"a": 1}, {"a": "x"}, {"ab": 1, "b": [1, 2]}, {"x": {"y": None}}, [], "s", 3, {"a": "\ud800"},
    {"a": "é" * 50},
]
LIMITS = [1, 2, 3, 20, 100_000]


def plain(tool: Tool, arguments: Any, max_bytes: int) -> str | None:
    """The check as it was: jsonschema and json.dumps on every call."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return f"invalid arguments for {tool.name}: expected a JSON object, got {type(arguments).__name__}"
    # the wire limits, and one reading of every value (a lone surrogate, an inexact integer: refused first)
    shape = value_problem(arguments, MAX_ARGUMENT_DEPTH) or walk_value(arguments, MAX_ARGUMENT_DEPTH,
                                                                      one_reading=True)[0]
    if shape is not None:
        return f"invalid arguments for {tool.name}: {shape}"
    size = len(json.dumps(arguments, default=str))
    if size > max_bytes:
        return f"arguments for {tool.name} are too large ({size} bytes > {max_bytes})"
    try:
        Draft202012Validator.check_schema(tool.input_schema)
    except SchemaError:
        return None
    error = next(iter(Draft202012Validator(tool.input_schema).iter_errors(arguments)), None)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"invalid arguments for {tool.name}: {error.message}" + (f" (at {where})" if where else "")


@pytest.mark.parametrize("schema", SCHEMAS, ids=[json.dumps(s) for s in SCHEMAS])
def test_every_verdict_is_jsonschemas(schema: dict[str, Any]) -> None:
    check = ArgumentCheck()
    tool = Tool(name="t", input_schema=schema)
    for _ in range(2):  # the first pass compiles and remembers, the second uses what was remembered
        for arguments in ARGUMENTS:
            for limit in LIMITS:
                assert check.problem(tool, arguments, limit) == plain(tool, arguments, limit), (
                    arguments, limit)


def test_the_remembered_verdict_on_empty_arguments_follows_the_tool() -> None:
    """A tool replaced under the same name (the upstream changed it) is judged by its new schema."""
    check = ArgumentCheck()
    lenient = Tool(name="t", input_schema={"type": "object"})
    strict = Tool(name="t", input_schema={"type": "object", "required": ["a"]})
    assert check.problem(lenient, {}, 100) is None
    assert check.problem(strict, {}, 100) == "invalid arguments for t: 'a' is a required property"
    assert check.problem(strict, None, 100) == "invalid arguments for t: 'a' is a required property"
    assert check.problem(lenient, {}, 100) is None
    other = Tool(name="u", input_schema={"type": "object", "minProperties": 1})
    assert check.problem(other, {}, 100) is not None and check.problem(lenient, {}, 100) is None


async def test_a_tools_validator_is_compiled_once_in_a_worker_thread(monkeypatch) -> None:
    """Compiling checks the upstream's schema against the metaschema (up to ~0.7 s of CPU at the largest
    schema still checked): never on the event loop, and once however many first calls wait for it."""
    import threading

    import anyio

    from sentinel_mcp.core import outside_schema

    threads: list[threading.Thread] = []
    real = outside_schema.validator

    def recording(schema: Any) -> Any:
        threads.append(threading.current_thread())
        return real(schema)

    monkeypatch.setattr(outside_schema, "validator", recording)
    check = ArgumentCheck()
    tool = Tool(name="t", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    assert not check.ready(tool)
    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(check.prepare, tool)
    assert check.ready(tool) and len(threads) == 1 and threads[0] is not threading.main_thread()
    assert "is not of type 'integer'" in (check.problem(tool, {"n": "x"}, 1000) or "")
    changed = Tool(name="t", input_schema={"type": "object"})  # the upstream changed it: compiled anew
    assert not check.ready(changed)
    await check.prepare(changed)
    assert check.ready(changed) and len(threads) == 2 and check.problem(changed, {"n": "x"}, 1000) is None
    huge = Tool(name="h", input_schema={"type": "object", "properties": {
        f"p{i}": {"type": "integer"} for i in range(outside_schema.MAX_SUBSCHEMAS)}})
    await check.prepare(huge)  # past the bound: unusable here, the upstream judges its own input
    assert check.problem(huge, {"p0": "x"}, 100_000) is None
