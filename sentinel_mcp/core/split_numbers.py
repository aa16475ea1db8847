"""A card number or an IBAN that a JSON value spells over its parts, each too short to be read as one: an
array's items (``["4111", "1111", "1111", "1111"]``, ``[4111, 1111, 1111, 1111]``), an object's string
values (``{"part1": "DE89", "part2": "3704", ...}``), the values of an object's keys numbered alike beside
others (``{"name": ..., "card_1": "4111", "card_2": ...}``: ``numbered_groups``) or one key of each object of
an array (``[{"p": "4111"}, {"p": "1111"}, ...]``: ``shared_keys``).

A part may itself be an array of its digits (``[[4, 1, 1, 1], [1, 1, 1, 1], ...]``). Only the whole value
counts: its parts, one space apart, are wholly one number (a card's 13-19 digits
passing Luhn and starting as an issuer's number does, ``_issued``, or an IBAN, ``iban_numbers.py``) and
nothing else. Windows of parts are not read: a list of short numbers (years, ports) holds a Luhn-valid window
of four items one time in ten for each window, so reading windows would mask half of such lists in the
records; a card spelled beside other parts is therefore not found (each part is read alone). An object's
numbers are not read as parts unless its keys number them alike (a bounding box's {"left": 0, "top": 1080,
...} would be a card one time in ten)."""

from __future__ import annotations

import re
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
        elif numbers and isinstance(p, list) and 0 < len(p) <= _MAX_CHARS and all(map(_digit_part, p)):
            texts.append("".join(str(d).strip() for d in p))  # ([[4, 1, 1, 1], [1, 1, 1, 1], ...])
        else:
            return None
    joined = " ".join(texts)
    if len(joined) > _MAX_CHARS or not any(c.isdecimal() for c in joined):
        return None
    if not any(c.isalpha() for c in joined):
        digits = "".join(str(int(c)) for c in joined if c.isdecimal())
        if all(c.isdecimal() or c in " -." for c in joined) and luhn(digits) and _issued(digits):
            return "card", digits[-4:]
        return None
    folded = "".join(str(int(c)) if c.isdecimal() else c for c in joined)
    if iban_spans(folded) == [(0, len(folded))]:
        return "iban", "".join(c for c in folded if c.isalnum())[-4:]
    return None


# a card number's issuer (its first digits, ISO/IEC 7812): Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37,
# Diners 30/36/38, JCB 35, Discover and UnionPay 6. A card spelled over parts must start so: dates, birth
# dates and years side by side (two "19xx-..." or "2024-..." make 16 digits, Luhn-valid one time in ten) never
# do
_ISSUER_FIRST = frozenset("3456")


def _issued(digits: str) -> bool:
    return digits[:1] in _ISSUER_FIRST or 2221 <= int(digits[:4]) <= 2720


def _digit_part(v: Any) -> bool:
    """An item of a part spelled as an array of its digits: a digit as an integer or a string."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return 0 <= v <= 9
    return isinstance(v, str) and len(v.strip()) == 1 and v.strip().isdecimal()


def _stems(key: str) -> tuple[str, ...]:
    """The stems a key names a part under: without its digits and separators ("card_1", "card-2",
    "cardPart3" share theirs), and, for a key of two words or more, without its last word, which may
    number it by a letter or a word ("card_a", "card b", "cardA", "card_first" share "card")."""
    words = _KEY_WORDS.findall(_CAMEL.sub(r"\1 ", key).lower())
    digitless = "".join(w for w in words if not w.isdecimal())
    head = "".join(words[:-1]) if len(words) > 1 else ""
    return ("#" + digitless,) + (("@" + head,) if head and head != digitless else ())


_CAMEL = re.compile(r"([^\W_])(?=[A-Z])")
_KEY_WORDS = re.compile(r"[^\W\d_]+|\d+")


def numbered_groups(value: dict[Any, Any]) -> list[list[Any]]:
    """The keys of ``value``, in order, that name parts of one thing (two or more sharing a stem: numbered,
    ``card_1`` .. ``card_4``, or differing in their last word, ``card_a`` .. ``card_d``) and hold a short
    number (a string or an integer)."""
    groups: dict[str, list[Any]] = {}
    for key, v in value.items():
        if isinstance(key, str) and _short_number(v):
            for stem in _stems(key):
                if stem[0] == "@" or _DIGIT.search(key) is not None:
                    groups.setdefault(stem, []).append(key)
    return [keys for keys in groups.values() if len(keys) > 1]


def shared_keys(items: list[Any]) -> list[Any]:
    """The keys every item of an array of two or more objects holds a short number under (``[{"p": "4111"},
    {"p": "1111"}, ...]``)."""
    if len(items) < 2 or not all(isinstance(i, dict) for i in items):
        return []
    return [k for k in items[0] if all(k in i and _short_number(i[k]) for i in items)]


def _short_number(v: Any) -> bool:
    """A card's part: up to 8 digits (spaced or not), as a string or a non-negative integer."""
    kind = type(v)  # (a bool is no part: its type is not int)
    if kind is int:
        return 0 <= v < 10**8
    return kind is str and len(v) <= 12 and _SHORT_NUMBER.fullmatch(v) is not None


_DIGIT = re.compile(r"\d")
_SHORT_NUMBER = re.compile(r"[\s.-]*\d[\d\s.-]*")  # (``\d``: any script's decimal digits)
