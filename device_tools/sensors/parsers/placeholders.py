"""What a phone prints for a value it does not know: "-", "", "?", "???", "null", "N/A" (termux-api and
dumpsys both do), or nothing at all. Such a value is unknown, never a 0, a False or a name, and a state is
read only from the fixed set its source documents: anything else is "unknown", so a hostile or broken source
cannot make a placeholder (or a sentence) into a reading."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNKNOWN = "unknown"
_WORDS = frozenset({"null", "none", "nil", "n/a", "na", "unknown", "undefined"})  # not NaN: a broken number


def is_placeholder(value: Any) -> bool:
    """Whether ``value`` says nothing: absent (None), or text with no letter or digit, or a word for none."""
    if value is None:
        return True
    if isinstance(value, str):
        text = value.strip()
        return not any(ch.isalnum() for ch in text) or text.casefold() in _WORDS
    return False


def state(value: Any, documented: Mapping[str, str]) -> str:
    """``documented[value]`` for a value spelled exactly as the source documents it, else "unknown"."""
    return documented.get(value, UNKNOWN) if isinstance(value, str) else UNKNOWN


def flag(value: Any) -> bool | None:
    """A JSON boolean, or dumpsys's "true"/"false"; anything else is unknown (None)."""
    if isinstance(value, bool):
        return value
    return {"true": True, "false": False}.get(value) if isinstance(value, str) else None
