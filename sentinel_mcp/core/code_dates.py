"""Digits beside a code word that are a date or a year, not a code: "booking code 4WQ150 on 2024/05/22",
"code review 2024", "Sicherheitscode gültig bis 31.12.2026".

A calendar date is read whole (year-month-day or day-month-year, one separator of ``-``, ``/`` or ``.``
throughout, a real month and day): a code is never printed as a date's groups. A bare year (1900-2099) is a
year when a word of four letters or more stands between it and the code word ("code review 2024"), and no
colon; right after the word, after a short one or after a label ("code 1987", "your code is 2024",
"Kod weryfikacyjny: 1987") it may be the code and is masked. (A 4-digit code of 1900-2099 written after a
longer word and no colon, "Kod weryfikacyjny 1987", is kept so: the price of "code review 2024" kept.)"""

from __future__ import annotations

import re

_DATE = re.compile(
    r"(?<![0-9])(?:(?:19|20)[0-9]{2}([-/.])(?:0?[1-9]|1[0-2])\1(?:0?[1-9]|[12][0-9]|3[01])"
    r"|(?:0?[1-9]|[12][0-9]|3[01])([-/.])(?:0?[1-9]|[12][0-9]|3[01])\2(?:19|20)[0-9]{2})(?![0-9])"
)
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")
_WORD = re.compile(r"[^\W\d_]{4,}")


def date_spans(folded: str) -> list[tuple[int, int]]:
    """(start, end) of each calendar date in a fold (ASCII digits), left to right."""
    if "-" not in folded and "/" not in folded and "." not in folded:
        return []
    return [m.span() for m in _DATE.finditer(folded)]


def in_a_date(span: tuple[int, int], dates: list[tuple[int, int]]) -> bool:
    return any(a <= span[0] and span[1] <= b for a, b in dates)


def a_year(run: str) -> bool:
    return _YEAR.fullmatch(run) is not None


def set_apart(between: str) -> bool:
    """Whether the text between a code word and a year holds a word of four letters or more and no label's
    mark ("Kod weryfikacyjny: 1987" gives the code its label)."""
    return _WORD.search(between) is not None and ":" not in between and "=" not in between
