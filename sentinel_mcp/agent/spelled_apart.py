"""Finding a word however it is spelled out: its letters and digits in order, with anything else between them
(spaces, dots, dashes, zero-width or other hidden characters), in any case, in characters NFKC folds to them
(fullwidth, mathematical letters). "H u n t e r 2", "Hun\\u200bter2" and "Ｈｕｎｔｅｒ２" all read as
"Hunter2" to whoever sees them.

Linear in the text: the text's letters are taken out once (``letters``), and each word's are looked for with
``str.find`` there; a regular expression with optional separators between every letter backtracked for
seconds over a 4,000-character text and 32 long look-alike words (a model chooses both).
"""

from __future__ import annotations

import re
import unicodedata

MIN_LETTERS = 4  # fewer letters and digits than this: too common a sequence to look for spelled out
_ASCII_OTHER = re.compile(r"[^A-Za-z0-9]+")  # in ASCII text, what ``letters`` leaves out


def letters(text: str) -> tuple[str, list[int]]:
    """``text``'s letters and digits, NFKC-folded and casefolded, and where each came from in ``text``."""
    kept: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        folded = ch if ch.isascii() else unicodedata.normalize("NFKC", ch)
        for c in folded:
            if c.isalnum():
                for f in c.casefold():
                    kept.append(f)
                    where.append(i)
    return "".join(kept), where


def key(word: str) -> str | None:
    """What ``word`` is looked for as (its letters); None when it has too few to look for spelled out."""
    found, _ = letters(word)
    return found if len(found) >= MIN_LETTERS else None


def spans(text: str, keys: list[tuple[str, int]]) -> list[tuple[int, int, int]]:
    """Where in ``text`` each ``(key, tag)`` is spelled out: ``(start, end, tag)``, sorted, overlaps kept."""
    # most text is ASCII and holds no password: its letters without the walk that says where each came from
    if text.isascii() and not any(needle in _ASCII_OTHER.sub("", text).lower() for needle, _ in keys):
        return []
    found_letters, where = letters(text)
    out: list[tuple[int, int, int]] = []
    for needle, tag in keys:
        at = found_letters.find(needle)
        while at >= 0:
            out.append((where[at], where[at + len(needle) - 1] + 1, tag))
            at = found_letters.find(needle, at + len(needle))
    return sorted(out)


def replaced(text: str, found: list[tuple[int, int, int]], by: str) -> str:
    """``text`` with every span of ``found`` (overlapping ones as one) replaced by ``by``."""
    parts: list[str] = []
    last = 0
    for start, end, _ in found:
        if start < last:  # overlaps the one before: that replacement covers it as far as it went
            if end > last:
                last = end
            continue
        parts += [text[last:start], by]
        last = end
    parts.append(text[last:])
    return "".join(parts)
