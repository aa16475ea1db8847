"""What the spellings of one person's name share (the runtime's ``person_name_key/2``, in
``policy/prolog/person_names.pl``, whose table ``policy/person_key_table.py`` writes from this module): its
letters alone, in order, each compatibility-decomposed (NFKD) with its marks left out, in lower case, and
each letter that reads as another (UTS #39's table, ``confusable_table``) taken as that one (a compatibility
form that NFKD would make a letter of another shape is taken as its prototype first: ``compat_folds``). A
person cannot tell "Mia" from "Mi\\u0430" with a Cyrillic а, so a list naming both names one person twice;
two real travellers named alike differ by their dates of birth.

A letter's look-alike class is found through its capital (the table maps "М", Cyrillic or Greek, to "M"; the
lower-case "м" to a small capital): the key is case-blind, so each letter is taken as its capital is. That
joins "i" with "l" (a capital "I" reads as "l"): keys are compared, never shown."""

from __future__ import annotations

import functools
import unicodedata

from sentinel_mcp.core.confusable_table import prototypes


def _letters(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text).lower()
    return "".join(c for c in decomposed if unicodedata.category(c)[0] == "L")


@functools.lru_cache(maxsize=8192)
def letter_fold(letter: str) -> str:
    """The key letters of one key letter (lower case, NFKD-stable): its capital's prototype, as letters."""
    capital = letter.upper()
    if len(capital) != 1:  # ("ß" is "SS": the letter stays itself, as the runtime's upcase keeps it)
        return letter
    return _letters(prototypes().get(capital, capital)) or letter


@functools.cache
def compat_folds() -> dict[str, str]:
    """The compatibility characters that NFKD takes to a letter of another shape than the one they read as
    (a Greek lunate sigma "ϲ", which reads as "c", is a sigma to NFKD): each to its prototype, before NFKD."""
    out: dict[str, str] = {}
    for source, prototype in prototypes().items():
        if unicodedata.normalize("NFKD", source) == unicodedata.normalize("NFD", source):
            continue  # not a compatibility form: NFKD keeps its shape
        if _key(prototype) != _key(source):  # (decomposed here: the runtime's NFKD is of an older Unicode)
            out[source] = unicodedata.normalize("NFKD", prototype)
    return out


def _key(text: str) -> str:
    return "".join(letter_fold(c) for c in _letters(text))


def person_name_key(name: str) -> str:
    """``name``'s key, as the runtime's ``person_name_key/2`` makes it."""
    folds = compat_folds()
    return _key("".join(folds.get(c, c) for c in name))
