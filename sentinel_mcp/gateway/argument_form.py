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
from sentinel_mcp.gateway.key_spellings import key_spelling_problem


def argument_form(schema: Any, arguments: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """``(the arguments in their one form, None)``, or ``(the arguments, why they are refused)``."""
    try:
        arguments = integral_as_int(arguments)
        given = arguments or {}
        return arguments, text_read_as_json(schema, given) or key_spelling_problem(schema, given)
    except NumberTooLarge as e:
        return arguments, str(e)
