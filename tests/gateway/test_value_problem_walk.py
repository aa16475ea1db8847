"""``value_problem`` (every message's and every call's arguments' bound) walks values without a check per
text: it must tell exactly what the plain walk tells (the same problem, or none) for every shape, subclasses
of the JSON types, booleans and numbers at the bounds included."""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from typing import Any

from sentinel_mcp.core.wire_limits import MAX_INT_DIGITS, value_problem


def reference(value: Any, max_depth: int, max_values: int) -> str | None:
    """The walk as first written: every item checked with ``isinstance``."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            seen += len(v)
            if seen > max_values:
                return f"holds more than {max_values} values"
        if isinstance(v, dict):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels"
            for item in v.values():
                if isinstance(item, (dict, list, int, float)):
                    stack.append((item, depth + 1))
        elif isinstance(v, list):
            if depth > max_depth:
                return f"nested deeper than {max_depth} levels"
            stack.extend((item, depth + 1) for item in v if isinstance(item, (dict, list, int, float)))
        elif isinstance(v, bool):
            continue
        elif isinstance(v, int):
            if v.bit_length() > MAX_INT_DIGITS * 3.33:
                return f"an integer has more than {MAX_INT_DIGITS} digits"
        elif isinstance(v, float) and not math.isfinite(v):
            return "a number is not finite"
    return None


class Text(str):
    pass


class Number(int):
    pass


class Items(list):  # type: ignore[type-arg]
    pass


LEAVES: list[Any] = [None, "", "x", Text("t"), True, False, 0, -1, 10**99, 10**100, 10**101, -(10**333),
                     Number(5), 1.5, -0.0, math.inf, -math.inf, math.nan, 1e308]


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 6 or roll < 0.4:
        return rng.choice(LEAVES)
    items = [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    if roll < 0.7:
        return items if roll < 0.6 else Items(items)
    kind = rng.choice([dict, OrderedDict])
    return kind((f"k{i}", v) for i, v in enumerate(items))


def test_the_walk_tells_what_the_plain_walk_tells() -> None:
    rng = random.Random(21)
    problems = set()
    for _ in range(4000):
        value = _value(rng, 0)
        for max_depth, max_values in ((64, 100_000), (3, 100_000), (64, 6), (2, 3)):
            want = reference(value, max_depth, max_values)
            assert value_problem(value, max_depth, max_values) == want, value
            problems.add(want.split(" ")[0] if want else None)
    assert problems == {None, "holds", "nested", "an", "a"}  # every outcome was met
