"""Names that read as another name: a hostile peer announces "Вооking" (a Cyrillic В and о) beside a pinned
"Booking", and a person, or a rule shown the name, reads the pinned one. Two general checks, no list of
letters:

- ``name_flaw``: a name must read as itself: at most ``MAX_NAME`` characters, no character a person cannot
  see as itself (``display_text.is_hidden``: controls, bidi overrides and isolates, zero-width and other
  default-ignorable characters), and letters of one script only (Unicode's Script property, from
  ``confusable_homoglyphs``' copy of it): Common (digits, punctuation, spaces) and Inherited (combining
  marks) go with any script, and Han goes with kana, Hangul or Bopomofo, and those with Latin, as UTS #39's
  "highly restrictive" level allows (Japanese and Korean names mix them honestly). Latin with Cyrillic,
  Greek, Cherokee... is how a look-alike is spelled.
- ``looks_alike``: whether two names that are not the same read alike, by UTS #39's confusable skeleton over
  its table of look-alike characters (``confusables.txt``, shipped whole: ``confusable_table``): invisible
  characters and combining marks dropped, each character replaced by the prototype of its class, then
  compatibility forms (NFKC) folded. The table comes first: NFKC turns some look-alikes into letters of
  another shape (a Greek lunate sigma "ϲ", which reads as "c", into a final sigma "ς"). Names are compared
  case-insensitively, so "ВООК" in Cyrillic capitals reads as a pinned "book": a name's skeleton is taken
  as written, lower-cased and upper-cased, and two names look alike when one of these is shared. A
  single-script name of another script ("Бронирование", "Αθήνα") is a name like any other: it looks alike
  only a name made of its look-alikes.

A skeleton is for comparing only, never shown (it mixes scripts by design).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from sentinel_mcp.core.confusable_table import prototypes as _prototypes
from sentinel_mcp.core.display_text import is_hidden

# Script sets a name may mix (UTS #39 "highly restrictive": Latin with Japanese, Korean or Bopomofo-Han)
_HONEST_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
)
_ANY_SCRIPT = frozenset({"COMMON", "INHERITED"})
_LATIN = frozenset({"LATIN"})
_MARKS = frozenset({"Mn", "Me"})  # combining marks a reader may take for a speck or not see at all
_ROUNDS = 3  # skeleton passes: a prototype lower-cased may be another class's member (bounded, no loop)
MAX_NAME = 200  # characters of a name that can read as itself
CACHED_LENGTH = MAX_NAME  # a longer text's skeleton is made each time, never kept


def name_flaw(name: str) -> str | None:
    """Why ``name`` cannot be trusted to read as itself, or None."""
    if len(name) > MAX_NAME:  # (nobody reads it at a glance; and each comparison costs its length)
        return f"it is longer than {MAX_NAME} characters"
    for i, ch in enumerate(name):
        if is_hidden(ch):
            return (f"it holds an invisible, control or direction-changing character (U+{ord(ch):04X} at "
                    f"character {i + 1})")
    scripts = scripts_of(name)
    if _dishonest(scripts):
        return f"it mixes letters of {', '.join(sorted(s.title() for s in scripts))} (look-alike letters)"
    return None


def _dishonest(scripts: frozenset[str]) -> bool:
    return len(scripts) > 1 and not any(scripts <= mix for mix in _HONEST_MIXES)


_WORD = re.compile(r"[^\W\d_]+")  # a run of letters (digits, marks and punctuation part words)


def mixed_words(text: str) -> int:
    """How many words of ``text`` mix the letters of scripts no honest word mixes ("pаypal" with a Cyrillic
    а): a value shown to a person who is to approve it reads as another there. ASCII text has none."""
    if text.isascii():
        return 0
    return sum(1 for word in _WORD.findall(text) if not word.isascii() and _dishonest(scripts_of(word)))


def scripts_of(name: str) -> frozenset[str]:
    """The scripts of ``name``'s characters, Common and Inherited left out (its compatibility forms read:
    full-width Latin is Latin)."""
    if name.isascii():  # ASCII letters are Latin, the rest Common: no table read for them (cold start)
        return _LATIN if any(ch.isalpha() for ch in name) else frozenset()
    from confusable_homoglyphs import categories  # (its table is read on first use, not at start-up)

    return frozenset(categories.alias(ch) for ch in unicodedata.normalize("NFKC", name)) - _ANY_SCRIPT


def looks_alike(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` read alike (the same name included)."""
    return bool(skeletons(a) & skeletons(b))


def skeletons(name: str) -> frozenset[str]:
    """``name``'s confusable skeletons: as written, lower-cased and upper-cased (see the module's note)."""
    plain = "".join(ch for ch in name if not is_hidden(ch)).strip()  # (NFKC after the table: _skeleton)
    forms = (plain, plain.casefold(), plain.upper())
    return frozenset(_skeleton_cached(f) if len(f) <= CACHED_LENGTH else _skeleton(f) for f in forms)


def _skeleton(text: str) -> str:
    for _ in range(_ROUNDS):
        mapped = "".join(_prototypes().get(ch, ch) for ch in _bare(text))
        mapped = _bare(unicodedata.normalize("NFKC", mapped)).casefold()
        if not mapped.isprintable():  # a prototype may hold what no one sees (a tab: U+1F16D)
            mapped = "".join(ch for ch in mapped if not is_hidden(ch))
        if mapped == text:
            break
        text = mapped
    return text


def _bare(text: str) -> str:
    """``text`` without combining marks (a dot above or below a letter is a speck to a reader)."""
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) not in _MARKS)


_skeleton_cached = functools.lru_cache(maxsize=4096)(_skeleton)


@functools.lru_cache(maxsize=8192)
def reads_as(ch: str) -> str:
    """What the one character ``ch`` reads as, for finding a word however it is written: its skeleton, taken
    again until it no longer changes (a prototype may be a compatibility form: "%" is "º/₀"),
    lower case. Like a skeleton, for comparing only."""
    text = ch
    for _ in range(_ROUNDS):
        folded = _skeleton(text)  # (NFKC after the table's prototypes: a lunate sigma is a c, not a sigma)
        if folded == text:
            break
        text = folded
    return text


def confusable_characters() -> list[str]:
    """Every character UTS #39's table takes to another (what ``reads_as`` may change)."""
    return list(_prototypes())

