"""One walk of a call's arguments for the validate step: the wire limits' verdict (``value_problem``, the same
walk, the same order, the same words) and what the argument form's checks need to know of the value, so that
they do not walk it again for nothing (issue 21):

- whether it holds a float anywhere (else no number is made an integer: ``core/json_numbers.py``);
- whether an object below the top holds two keys or more (else no two keys of one object can be one name to a
  case-folding reader below the top: ``key_spellings.py``).

Both are conservative: "maybe" runs the check in full, as before; only "surely not" skips it.
``tests/gateway/test_argument_walk.py`` compares the verdicts with ``value_problem`` over generated values.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from sentinel_mcp.core.wire_limits import MAX_INT_DIGITS, MAX_VALUES

_WALKED = (dict, list, int, float)  # as ``value_problem``: the values with something to check


class ArgumentWalk(NamedTuple):
    problem: str | None  # what ``value_problem(value, max_depth)`` says
    floats: bool  # a float somewhere (only meaningful without a problem: the walk stops at one)
    nested_keys: bool  # an object below the top with two keys or more (the same)


def walk_arguments(value: Any, max_depth: int, max_values: int = MAX_VALUES) -> ArgumentWalk:
    """``value_problem(value, max_depth, max_values)``, step for step, noting floats and nested objects."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    floats = nested = False
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            items: Any = v.values()
            if depth > 1 and len(v) > 1:
                nested = True
        elif isinstance(v, list):
            items = v
        elif isinstance(v, bool):
            continue
        elif isinstance(v, int):
            if v.bit_length() > MAX_INT_DIGITS * 3.33:
                return ArgumentWalk(f"an integer has more than {MAX_INT_DIGITS} digits", floats, nested)
            continue
        else:
            if isinstance(v, float):
                floats = True
                if not math.isfinite(v):
                    return ArgumentWalk("a number is not finite", floats, nested)
            continue
        seen += len(v)
        if seen > max_values:
            return ArgumentWalk(f"holds more than {max_values} values", floats, nested)
        if depth > max_depth:
            return ArgumentWalk(f"nested deeper than {max_depth} levels", floats, nested)
        for item in items:
            if type(item) is not str and item is not None and isinstance(item, _WALKED):
                stack.append((item, depth + 1))
    return ArgumentWalk(None, floats, nested)
