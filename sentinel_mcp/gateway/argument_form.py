"""The one form of a call's arguments that both the guard and the upstream get (the validate step's end).

A guard decides on the arguments as Sentinel reads them; the upstream acts on them as it reads them. Where the
two readings can differ, the arguments are put in the one form both share, or refused:
- an integral float is the integer it equals (``13.0`` is the upstream's ``13``: ``core/json_numbers.py``);
- text holding a JSON array or object is refused where the tool takes more than plain text
  (``json_in_text.py``);
- keys of one object that are one key to a case-folding reader are refused (``key_spellings.py``).
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.json_numbers import NumberTooLarge, integral_as_int
from sentinel_mcp.gateway.json_in_text import text_read_as_json
from sentinel_mcp.core.wire_limits import ValueWalk
from sentinel_mcp.gateway.key_spellings import key_spelling_problem, top_key_spelling_problem


def argument_form(
    schema: Any, arguments: dict[str, Any] | None, walk: ValueWalk | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """``(the arguments in their one form, None)``, or ``(the arguments, why they are refused)``. ``walk``:
    what the validate step's walk of these arguments found (``wire_limits.walk_value``): a check it shows to
    have
    nothing to find is not run (the same answer, the same refusal first)."""
    if not arguments:  # None or {}: no number, no text, no key
        return arguments, None
    floats, nested_keys = (True, True) if walk is None else walk[1:]
    try:
        if floats:
            arguments = integral_as_int(arguments)
        given = arguments or {}
        problem = text_read_as_json(schema, given)
        if problem is None:
            problem = (key_spelling_problem(schema, given) if nested_keys
                       else top_key_spelling_problem(schema, given))
        return arguments, problem
    except NumberTooLarge as e:
        return arguments, str(e)
