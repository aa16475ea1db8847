"""The validate step walks a call's arguments once (``wire_limits.walk_value``): the walk's verdict is
``value_problem``'s, and the argument form's checks skipped on what it found give the answer and the refusal
they gave when run in full, first refusal first, the same words."""

from __future__ import annotations

import random
from typing import Any

import pytest
from mcp.types import Tool

from sentinel_mcp.core.json_numbers import NumberTooLarge, integral_as_int
from sentinel_mcp.core.wire_limits import MAX_ARGUMENT_DEPTH, value_problem
from sentinel_mcp.gateway import argument_form as form_module
from sentinel_mcp.gateway.argument_check import ArgumentCheck
from sentinel_mcp.gateway.argument_form import argument_form
from sentinel_mcp.core.wire_limits import walk_value
from sentinel_mcp.gateway.json_in_text import text_read_as_json
from sentinel_mcp.gateway.key_spellings import key_spelling_problem
from tests.gateway.test_value_problem_walk import _value

# keys one case-folding reader takes for one name; text an upstream may read as JSON; numbers the form changes
KEYS = ["a", "A", "b", "s", "\u017f", "K", "\u212a", "k", "acct", "ACCT", "x"]
LEAVES: list[Any] = ["", "x", "[13]", '{"a": 1}', " [1]", "[not json", None, True, 0, 13, 13.0, -0.0, 1.5,
                     1e300, 2.5e1, 10**99]
SCHEMAS: list[Any] = [
    {"type": "object"},
    {"type": "object", "properties": {"a": {"type": "string"}, "acct": {"type": "integer"}, "s": {}}},
    {"type": "object", "properties": {"A": {"type": "string"}, "k": {"type": "string"}}},
    None,
]


def reference_form(schema: Any, arguments: Any) -> tuple[Any, str | None]:
    """The argument form as first written: every check over the whole value."""
    try:
        arguments = integral_as_int(arguments)
        given = arguments or {}
        return arguments, text_read_as_json(schema, given) or key_spelling_problem(schema, given)
    except NumberTooLarge as e:
        return arguments, str(e)


def _arguments(rng: random.Random, depth: int = 0) -> Any:
    if depth > 3 or (depth and rng.random() < 0.45):
        return rng.choice(LEAVES)
    if depth and rng.random() < 0.3:
        return [_arguments(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(KEYS): _arguments(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_the_walk_tells_what_value_problem_tells() -> None:
    rng = random.Random(2121)
    for _ in range(3000):
        value = _value(rng, 0)
        for max_depth, max_values in ((64, 100_000), (3, 100_000), (64, 6), (2, 3)):
            assert walk_value(value, max_depth, max_values)[0] == value_problem(
                value, max_depth, max_values), value


def test_the_form_after_one_walk_is_the_full_forms() -> None:
    rng = random.Random(21)
    for empty in (None, {}):
        assert argument_form(SCHEMAS[1], empty) == reference_form(SCHEMAS[1], empty)
        assert argument_form(SCHEMAS[1], empty)[0] is empty
    refused: set[str] = set()
    skipped = 0
    for i in range(6000):
        args = _arguments(rng)
        walk = walk_value(args, MAX_ARGUMENT_DEPTH)
        assert walk[0] is None
        skipped += not walk[1] or not walk[2]
        for schema in SCHEMAS:
            full_args, full_problem = reference_form(schema, args)  # every check in full, as before
            for one_args, one_problem in (argument_form(schema, args, walk), argument_form(schema, args)):
                assert (one_args, one_problem) == (full_args, full_problem), (i, schema, args)
                assert (one_args is args) == (full_args is args), (i, args)  # no copy without a change
            refused.add((full_problem or "none").split(" ")[0])
    assert refused == {"none", "argument", "the"}, refused  # JSON text and spellings; a number too large
    assert skipped > 1000, skipped


def test_what_the_walk_rules_out_is_not_walked_again(monkeypatch: Any) -> None:
    """Arguments without a float or a nested object of two keys: neither the number form nor the deep key walk
    runs; with them, both run."""
    calls: list[str] = []
    for name in ("integral_as_int", "key_spelling_problem"):
        real = getattr(form_module, name)

        def counted(*a: Any, _real: Any = real, _name: str = name) -> Any:
            calls.append(_name)
            return _real(*a)

        monkeypatch.setattr(form_module, name, counted)
    plain = {"a": "x", "n": 13, "tags": ["t", {"only": 1}]}
    assert argument_form(None, plain, walk_value(plain, MAX_ARGUMENT_DEPTH)) == (plain, None)
    assert calls == []
    deep = {"a": {"x": 1, "X": 2}, "n": 13.0}
    _, problem = argument_form(None, deep, walk_value(deep, MAX_ARGUMENT_DEPTH))
    assert problem is not None and "'x' and 'X'" in problem
    assert calls == ["integral_as_int", "key_spelling_problem"]


@pytest.mark.parametrize("args,first", [
    ({"n": 10**101}, "invalid arguments for t: an integer has more than 100 digits"),
    ({"n": [[[[1]]]]}, None),
    ({"n": float("nan")}, "invalid arguments for t: a number is not finite"),
])
def test_the_check_reports_the_walks_verdict(args: dict[str, Any], first: str | None) -> None:
    tool = Tool(name="t", input_schema={"type": "object"})
    problem, walk = ArgumentCheck().check(tool, args, 10_000)
    assert problem == first and walk is not None and walk[0] == value_problem(args, MAX_ARGUMENT_DEPTH)
    assert ArgumentCheck().check(tool, {}, 10_000) == (None, None)
