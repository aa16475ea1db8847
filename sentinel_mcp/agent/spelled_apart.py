"""Finding a word however it is spelled out: its letters and digits in order, with anything else between them
(spaces, dots, dashes, zero-width or other hidden characters), in any case, in characters that read as them:
compatibility forms (fullwidth, mathematical letters), look-alikes of other scripts (a Cyrillic "Н" or Greek
"Ε"), letters with marks ("é", "u" and a combining diaeresis). "H u n t e r 2", "Hun\\u200bter2",
"Ｈｕｎｔｅｒ２" and "Нuntеr2" all read as "Hunter2" to whoever sees them. Each character is taken to what it
reads as (``look_alike_names.reads_as``: UTS #39's confusable skeleton, lower case), the word and the text
alike, before they are compared.

A sign that reads as a letter ("|" as "l", "0" is read as "o" anyway) is either: the text is read twice, once
with signs as separators and once with the ones that read as letters as those letters.

And a word is found in part: any run of more than half its letters (``fragment_letters``, at most
``MAX_FRAGMENT``) is found like the whole (a word said half at a time is said).

Linear in the text: its letters are taken out once (``letters``) and each position looked up once per
fragment length in a set of the words' fragments; a regular expression with optional separators between
every letter backtracked for seconds over a 4,000-character text and 32 long look-alike words (a model
chooses both).
"""

from __future__ import annotations

import functools
import unicodedata

from sentinel_mcp.core.look_alike_names import reads_as

MIN_LETTERS = 4  # fewer letters and digits than this: too common a sequence to look for spelled out
MAX_FRAGMENT = 12  # a part of a longer word this long is found (each position costs a slice this long)


@functools.lru_cache(maxsize=8192)
def _fold(ch: str) -> tuple[str, str]:
    """``ch`` as letters: (as a letter or digit, "" for any other sign; as what it reads as, any sign)."""
    read = "".join(c for c in reads_as(ch) if c.isalnum())
    plain = ch if ch.isascii() else unicodedata.normalize("NFKD", ch)
    return (read if any(c.isalnum() for c in plain) else ""), read


def letters(text: str, signs_read: bool = False) -> tuple[str, list[int]]:
    """``text``'s letters and digits as they read, and where each came from in ``text``; ``signs_read``:
    with the signs that read as letters as those letters."""
    kept: list[str] = []
    where: list[int] = []
    pick = 1 if signs_read else 0
    for i, ch in enumerate(text):
        for c in _fold(ch)[pick]:
            kept.append(c)
            where.append(i)
    return "".join(kept), where


# ASCII text's letters (most text), without the walk that says where each came from
_ASCII = tuple({i: _fold(chr(i))[pick] or None for i in range(128)} for pick in (0, 1))


def key(word: str) -> str | None:
    """What ``word`` is looked for as (its letters); None when it has too few to look for spelled out."""
    found, _ = letters(word)
    return found if len(found) >= MIN_LETTERS else None


def fragment_letters(length: int) -> int:
    """How many of a word's ``length`` letters in a row are found as the word: more than half of them, at
    least ``MIN_LETTERS``, at most ``MAX_FRAGMENT`` (and all of a shorter word)."""
    return min(length, max(MIN_LETTERS, min(MAX_FRAGMENT, length // 2 + 1)))


class Fragments:
    """The fragments of some keys, by length: each run of ``fragment_letters`` of a key's letters -> its tag
    (the first key's that has it)."""

    def __init__(self, keys: list[tuple[str, int]]) -> None:
        self.by_length: dict[int, dict[str, int]] = {}
        for needle, tag in keys:
            size = fragment_letters(len(needle))
            table = self.by_length.setdefault(size, {})
            for at in range(len(needle) - size + 1):
                table.setdefault(needle[at:at + size], tag)


def spans(text: str, fragments: Fragments) -> list[tuple[int, int, int]]:
    """Where in ``text`` a fragment of a key is spelled out: ``(start, end, tag)``, sorted, overlaps kept."""
    out: list[tuple[int, int, int]] = []
    if not fragments.by_length:
        return out
    for signs_read in (False, True):
        found = text.translate(_ASCII[signs_read]) if text.isascii() else letters(text, signs_read)[0]
        hits = [(at, size, tag) for size, table in fragments.by_length.items()
                for at in range(len(found) - size + 1) if (tag := table.get(found[at:at + size])) is not None]
        if hits:
            where = letters(text, signs_read)[1]
            out += [(where[at], where[at + size - 1] + 1, tag) for at, size, tag in hits]
        if not any(_fold(ch)[0] != _fold(ch)[1] for ch in set(text)):
            break  # no sign reads as a letter: the second reading is the first
    return sorted(set(out))


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
