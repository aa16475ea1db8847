"""Another agent's structured data (an orchestrator's data parts), kept as data Sentinel relays and never
reads: bounded in depth, items and size, every string made safe to show, and wrapped under a fixed key, so
nothing it holds sits where Sentinel's own fields are (a ``type``, a ``mode``, a ``human_assist_request``
of its own are one level down, inside ``value``). Before, a data part was relayed raw: any size, any depth,
hidden characters, and fields of its choosing beside Sentinel's."""

from __future__ import annotations

import math
from typing import Any

from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.core.utf8_text import utf8_prefix, utf8_size

MAX_DEPTH = 8
MAX_ITEMS = 64  # per object or list
MAX_KEY = 100
MAX_STRING = 2000  # characters of one string shown (the budget below is what bounds its cost)
MAX_BYTES = 16_384  # UTF-8 bytes of one part's JSON: keys, strings, numbers, brackets (as near as counted)
CUT = "[cut: more data than Sentinel relays]"
DEEPER = "[cut: nested deeper than Sentinel relays]"


class _Budget:
    """What is left of a part's UTF-8 bytes (``utf8_text.py``: a character bound held 4x its bytes)."""

    def __init__(self, size: int) -> None:
        self.left = size

    def take(self, text: str) -> str | None:
        if self.left <= 0:
            return None
        text = utf8_prefix(text, self.left)
        self.left -= max(1, utf8_size(text))
        return text

    def charge(self, size: int) -> None:
        """A number, ``true``, ``null`` or a container's brackets: their bytes count as a string's do (only
        keys and strings were counted: 64 x 64 x 24 numbers went whole)."""
        self.left -= size


def relayed_data(value: Any, from_agent: str) -> dict[str, Any]:
    """``value`` as a relayed data part's ``data``: ``{"from_agent", "value"}`` (see the module docstring)."""
    return {"from_agent": from_agent, "value": shown_value(value)}


def shown_value(value: Any, max_depth: int = MAX_DEPTH, size: int = MAX_BYTES) -> Any:
    """Another agent's JSON in its own shape, bounded (``max_depth`` levels, ``MAX_ITEMS`` per object or list,
    ``size`` UTF-8 bytes of keys and strings in all) and with every key and string made safe to show."""
    return _safe(value, 0, _Budget(size), max_depth)


def _safe(value: Any, depth: int, budget: _Budget, max_depth: int) -> Any:
    if value is None or isinstance(value, bool):
        budget.charge(5)
        return value
    if isinstance(value, int):
        if abs(value) >= 2**53:  # exact in every JSON reader only below
            return budget.take(safe_text(str(value), 40)) or CUT
        budget.charge(len(str(value)) + 1)
        return value
    if isinstance(value, float):
        budget.charge(len(repr(value)) + 1)
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        kept = budget.take(safe_text(value, MAX_STRING, keep_newlines=True))
        return CUT if kept is None else kept
    if depth >= max_depth or not isinstance(value, (dict, list)):
        return DEEPER if depth >= max_depth else CUT
    budget.charge(2)
    if isinstance(value, list):
        items = []
        for item in value[:MAX_ITEMS]:
            if budget.left <= 0:
                items.append(CUT)
                break
            items.append(_safe(item, depth + 1, budget, max_depth))
        return items
    out: dict[str, Any] = {}
    for key, item in list(value.items())[:MAX_ITEMS]:
        name = budget.take(safe_text(str(key), MAX_KEY)) if budget.left > 0 else None
        if name is None:
            out[CUT] = True
            break
        out[name] = _safe(item, depth + 1, budget, max_depth)
    return out
