"""A message's depth bound holds on its text, not only on what survives parsing: a value a later duplicate
name discards (``{"id": [[[…]]], …, "id": 1}``) is gone from the parsed message, so the walk of the parsed
value never met it, yet every other parser of the same text (the SDK's SSE transport re-reads the body with
pydantic, whose limit is far below Python's) did, and failed with a logged traceback. Told on the text at C
speed, brackets inside strings not counted; a message within the bound is parsed as before."""

from __future__ import annotations

import json

import pytest

from sentinel_mcp.core.wire_limits import INVALID_REQUEST, MAX_DEPTH, WireError, loads


def _arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("spelt", [
    '{"id": %s, "jsonrpc": "2.0", "method": "ping", "id": 1}',
    '{"jsonrpc": "2.0", "method": "ping", "id": 1, "params": {"a": %s, "a": 1}}',
    '{"jsonrpc": "2.0", "method": "ping", "id": 1, "params": {"a": {"b": %s, "b": {}}}}',
])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200, 900])
def test_a_discarded_value_nested_too_deep_is_refused(spelt: str, depth: int) -> None:
    with pytest.raises(WireError) as refused:
        loads((spelt % _arrays(depth)).encode())
    assert refused.value.code == INVALID_REQUEST and "nested deeper" in refused.value.message


def test_the_bound_is_the_parsed_walks_own() -> None:
    """A container at depth MAX_DEPTH (the message's object is 1) passes; one deeper is refused either way."""
    inner = _arrays(MAX_DEPTH - 1)
    assert loads('{"a": %s}' % inner) == {"a": json.loads(inner)}
    with pytest.raises(WireError):
        loads('{"a": %s}' % _arrays(MAX_DEPTH))
    with pytest.raises(WireError):
        loads('{"a": %s, "a": 1}' % _arrays(MAX_DEPTH))


def test_brackets_inside_strings_are_text() -> None:
    text = "[{" * 5000 + '\\"]' + "}]" * 5000
    assert loads(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"t": text}}))[
        "params"]["t"] == json.loads(json.dumps(text))


@pytest.mark.parametrize("inside", ['\\\\', '\\"', '\\\\\\"', '\\u005b', "[{", "]}]}", "\u00e9[", "\\\\\\\\"])
def test_escapes_beside_brackets_in_strings(inside: str) -> None:
    """However a string spells its escapes, its brackets are text: a nesting within the bound passes, one past
    it (discarded by a duplicate name) is refused."""
    within = '{"s": "%s", "a": %s, "t": "%s]]"}' % (inside, _arrays(MAX_DEPTH - 1), inside)
    assert loads(within)["a"] == json.loads(_arrays(MAX_DEPTH - 1))
    past = '{"s": "%s", "a": %s, "a": 1, "t": "%s[["}' % (inside, _arrays(MAX_DEPTH), inside)
    with pytest.raises(WireError):
        loads(past)
