"""Whether a value a caller gives (an answer, its inputs, a context's value) may be kept as a fact.

A tool's result past ``FACT_VALUE``'s limits teaches no fact (``policy/fact_bounds.py``); what a caller says
meets the same limits, or one call of a few megabytes writes a fact of a few megabytes into the store, read
back by every decision of its conversation. A fact is kept whole or not at all (a cut text is another
answer), so a value past the limits is refused, saying so.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.record_bounds import FACT_VALUE, within


def size_problem(value: Any, what: str = "the answer") -> str | None:
    """Why ``value`` cannot be kept as (part of) a fact, or None when it can."""
    if within(value, FACT_VALUE):
        return None
    return (f"{what} is larger than a fact Sentinel keeps ({FACT_VALUE.chars} characters of JSON, "
            f"{FACT_VALUE.depth} levels)")
