"""A card number or an IBAN that a JSON value spells over its parts, each too short to be read as one: an
array's items (``["4111", "1111", "1111", "1111"]``, ``[4111, 1111, 1111, 1111]``) or an object's string
values (``{"part1": "DE89", "part2": "3704", ...}``).

Only the whole value counts: its parts, one space apart, are wholly one number (a card's 13-19 digits
passing Luhn, ``card_numbers.py``, or an IBAN, ``iban_numbers.py``) and nothing else. Windows of parts are
not read: a list of short numbers (years, ports) holds a Luhn-valid window of four items one time in ten for
each window, so reading windows would mask half of such lists in the records; a card spelled beside other
parts is therefore not found (each part is read alone). An object's numbers are not read as parts (a
bounding box's {"left": 0, "top": 1080, ...} would be a card one time in ten)."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.card_numbers import luhn
from sentinel_mcp.core.iban_numbers import iban_spans

_MAX_CHARS = 80  # more than an IBAN (34 and its spaces) or a card spaced out: no number of either


def spelled_number(parts: list[Any], numbers: bool) -> tuple[str, str] | None:
    """(kind, last four) of the card (``"card"``) or IBAN (``"iban"``) ``parts`` spell whole, or None;
    ``numbers``: whether an integer may be a part (an array's, not an object's)."""
    if len(parts) < 2:
        return None
    texts = []
    for p in parts:
        if isinstance(p, str):
            texts.append(p.strip())
        elif numbers and isinstance(p, int) and not isinstance(p, bool) and 0 <= p < 10**19:
            texts.append(str(p))
        else:
            return None
    joined = " ".join(texts)
    if len(joined) > _MAX_CHARS or not any(c.isdecimal() for c in joined):
        return None
    if not any(c.isalpha() for c in joined):
        digits = "".join(str(int(c)) for c in joined if c.isdecimal())
        if all(c.isdecimal() or c in " -." for c in joined) and luhn(digits):
            return "card", digits[-4:]
        return None
    folded = "".join(str(int(c)) if c.isdecimal() else c for c in joined)
    if iban_spans(folded) == [(0, len(folded))]:
        return "iban", "".join(c for c in folded if c.isalnum())[-4:]
    return None
