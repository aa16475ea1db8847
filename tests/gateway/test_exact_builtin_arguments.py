"""A built-in tool runs on exactly the arguments the guard judged (red team 'coercion', rt-coercion).

The gateway checks a call's arguments against the tool's input schema (JSON Schema: ``3.0`` is an integer)
and the guard decides on them; a built-in's MCP layer (the SDK's ``MCPServer``, pydantic in lax mode) then
read them again: ``"null"`` given for a text became no text at all (``sms_list``'s ``query``: no filter,
``sensor_consent``'s ``requester``: nobody's). The table below
is built from the live catalog of every built-in: for each declared field, values of another JSON type than
declared; each is refused (by the gateway's schema check or by the tool's own check) or reaches the tool as
the very value judged (a JSON integer for a number field: the same number, as a float)."""

from __future__ import annotations

import math
from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from sentinel_mcp.app.describe_builtins import default_without_upstreams
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.builtin import BUILTINS
from sentinel_mcp.gateway.upstream import BuiltinTarget

pytestmark = pytest.mark.timeout(180)

# values lax pydantic turns into something else: JSON texts of other types, numbers of the other kind,
# truth values for numbers, numbers and texts for truth values, containers for scalars
WRONG: list[Any] = [
    "3", "-1", "2.5", "true", "false", "null", "[1]", '["a"]', '{"a": 1}', "{}", "", " 3 ",
    3, 0, 1, 3.0, -0.0, 2.5, 1e300, 2**70, True, False, None, ["x"], [], {"a": 1}, {},
]


def _sample(schema: Any) -> Any:
    """A value that ``schema`` (a property's) most likely accepts, for the fields a case does not attack."""
    if not isinstance(schema, dict):
        return "a"
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    for branch in schema.get("anyOf", []):
        if isinstance(branch, dict) and branch.get("type") != "null":
            return _sample(branch)
    kind = schema.get("type")
    minimum = schema.get("minimum", schema.get("exclusiveMinimum", 0))
    return {
        "integer": max(1, math.ceil(minimum)), "number": max(1, minimum) + 0.5, "boolean": False,
        "array": [], "object": {},
    }.get(kind, "a" * max(1, schema.get("minLength", 1)))


def _as_json(value: Any) -> Any:
    """What the tool holds, as JSON would say it (an enum member as its value, a model as its dump)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_json(v) for k, v in value.items()}
    return value


def _same(sent: Any, got: Any) -> bool:
    """``got`` is ``sent``: the same JSON type and value (a JSON integer held as the equal float allowed)."""
    if type(sent) is int and type(got) is float:
        return math.isfinite(got) and got == sent and int(got) == sent
    if type(sent) is not type(got):
        return False
    if type(sent) is list:
        return len(sent) == len(got) and all(_same(a, b) for a, b in zip(sent, got, strict=True))
    if type(sent) is dict:
        return all(k in got and _same(v, got[k]) for k, v in sent.items())
    return bool(sent == got) and (type(sent) is not float or math.copysign(1, sent) == math.copysign(1, got))


def _field_name(meta: Any, key: str) -> str:
    for name, info in meta.arg_model.model_fields.items():
        if key in (name, info.alias):
            return str(name)
    return key


async def test_every_builtin_field_runs_on_the_value_judged(tmp_path, data_dir):
    coerced: list[str] = []
    attacked: dict[str, int] = {}
    async with running_gateway(default_without_upstreams(), lazy_builtins=False) as rt:
        catalog = rt.manager.catalog
        for exposed, route in catalog.tools.items():
            up = rt.manager.upstreams[route.upstream]
            if not isinstance(up.target, BuiltinTarget):
                continue
            meta = up.target.server._tool_manager._tools[route.tool].fn_metadata  # what a call runs
            props = route.exposed.input_schema.get("properties", {})
            required = route.exposed.input_schema.get("required", [])
            for key in props:
                base = {k: _sample(props[k]) for k in required if k != key}
                for value in WRONG:
                    # the gateway's own steps: schema, defaults, the argument form; what the guard decides on
                    judged, problem = await rt.gateway.judged_arguments(exposed, {**base, key: value})
                    if problem is not None:
                        continue  # refused before the guard
                    try:
                        validated = meta.validate_arguments(dict(judged))
                    except ValidationError:
                        continue  # refused by the tool's own check, nothing ran
                    attacked[route.upstream] = attacked.get(route.upstream, 0) + 1
                    for k, v in judged.items():
                        got = _as_json(validated[_field_name(meta, k)])
                        if not _same(v, got):
                            coerced.append(f"{route.tool}.{k}: {value!r} sent, {v!r} judged, {got!r} run")
    assert set(attacked) == set(BUILTINS), attacked  # every built-in's fields were reached by some case
    assert coerced == [], "\n".join(coerced)


async def test_every_builtin_tool_reads_its_arguments_as_sent(tmp_path, data_dir):
    """The tool's own reading, whatever reaches it (a step before it changed, a path that skips one): each
    wrong value is refused by the tool or held exactly (the SDK's lax reading, held by ``hold_exact``)."""
    coerced: list[str] = []
    held = 0
    async with running_gateway(default_without_upstreams(), lazy_builtins=False) as rt:
        for up in rt.manager.upstreams.values():
            if not isinstance(up.target, BuiltinTarget):
                continue
            for sdk in up.target.server._tool_manager._tools.values():
                meta = sdk.fn_metadata
                props = sdk.parameters.get("properties", {})
                base = {k: _sample(props[k]) for k in sdk.parameters.get("required", [])}
                for key in props:
                    for value in WRONG:
                        arguments = {**base, key: value}
                        try:
                            validated = meta.validate_arguments(dict(arguments))
                        except ValidationError:
                            continue
                        held += 1
                        got = _as_json(validated[_field_name(meta, key)])
                        if not _same(value, got):
                            coerced.append(f"{sdk.name}.{key}: {value!r} sent, {got!r} run")
    assert held > 100, held  # the table reached the tools, it did not only collect refusals
    assert coerced == [], "\n".join(coerced)
