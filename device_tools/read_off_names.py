"""The names the phone knows in text read off the screen's pixels (OCR), as OCR spells them.

OCR breaks a name over lines and words ("Home-" / "Net 5G", "H o m e N e t"), drops accents and emoji, and
reads look-alikes for one another (0 for O, 1 or I for l, rn for m). A name is matched on both sides' letters
and digits alone, in one run (every space, line break and mark gone), with those look-alikes folded into one:
an allow list of OCR's confusions (``_LOOK_ALIKE``), applied to the name and the text alike. What OCR puts
for an i or an l it could not tell apart (a capital I, a 1, a stroke) matches either letter of a name; a
plain i and a plain l are read as they are ("Mail" is not the network "Mall": the fold is there to find a
name, never to make two plain words one).
Without spaces a word has no edges: a name counts this way from ``SQUASH_FLOOR`` letters on ("home" would be
in "go home page" and "homepage"); a shorter one counts as a whole word of the folded text, one of fewer than
``NAME_FLOOR`` characters as a whole line (as ``shows_name``).

Cost: one pass over the text, then per name a substring search of the loose fold (every look-alike one
letter) and, only where it finds the name, the precise pattern (10 KB against 512 names: a few tens of
milliseconds; a name's patterns are compiled once and kept).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from .network_names import short

SQUASH_FLOOR = 6
# a character OCR reads for another, folded to one of them on both sides (letters and digits only: a word's
# edges stay)
_LOOK_ALIKE = str.maketrans({"0": "o", "5": "s", "8": "b"})
# what OCR puts where the pixels show an i or an l (sans-serif draws a capital I, an l and a 1 alike; a stroke
# or a dotless ı where the dot was lost): one mark, read as either letter of a name. The plain letters i and l
# are read as they are: folding them into one made "Mail" the network "Mall". A capital I is marked before
# case is folded; a stroke (not a letter) only in the run, so "Home!" keeps its word's edge
_EITHER = "\u0131"
_EITHER_IN_WORDS = str.maketrans({"I": _EITHER, "1": _EITHER})
_EITHER_IN_RUN = str.maketrans({"|": _EITHER, "!": _EITHER})
# a name's letter and what in the text may stand for it (a 1 in a name is read as an l too)
_CLASSES = {"i": f"[i{_EITHER}]", "l": f"[l{_EITHER}]", _EITHER: f"[il{_EITHER}]"}
# and in the run: an m read as rn and a w as vv, spelled out (folding the pair into one letter would take the
# r of the word before a name beginning with n: "hier" + "nachbar")
_SPELLED_OUT = str.maketrans({"m": "rn", "w": "vv"})
_NOT_LETTERS = re.compile(r"[\W_]+")
# the plain fold, every look-alike one letter: what the precise match finds is found by it too, so a name it
# does not find is skipped without a pattern (most names on most screens)
_LOOSE = str.maketrans({"i": "l", _EITHER: "l"})
_SQUASH = re.compile(r"[\s-]+")  # and without spaces and hyphens (a line break inside a name)
_LINE_BREAK = r"(?:-?[^\S\n]*\n[^\S\n]*)?"


def _plain(text: str) -> str:
    """Compatibility forms and case folded, accents and invisible format characters dropped; OCR's i-or-l
    characters marked."""
    text = unicodedata.normalize("NFKC", text).translate(_EITHER_IN_WORDS)
    text = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Cf"))


def ocr_spellings(text: str) -> tuple[str, str, int]:
    """``text`` with OCR's look-alikes folded: its words kept apart, its letters and digits in one run, and
    how many letters and digits it has."""
    plain = _plain(text).translate(_LOOK_ALIKE)
    run = _NOT_LETTERS.sub("", plain.translate(_EITHER_IN_RUN))
    return plain, run.translate(_SPELLED_OUT), len(run)


@functools.lru_cache(maxsize=1024)
def _spelled(name: str) -> tuple[re.Pattern[str], re.Pattern[str], bool, str, str]:
    """A (folded) name as OCR may spell it: the pattern of its words (a whole line when it is short), the
    pattern of its run, whether the run is long enough to count, and both spellings loosely folded."""
    words, run, letters = ocr_spellings(name)
    words = words.strip()
    if short(words):
        body = "".join(_CLASSES.get(c) or re.escape(c) for c in words)
        in_words = re.compile(rf"^[^\S\n]*{body}[^\S\n]*$", re.MULTILINE)
    else:
        # a line may break inside the name (after a hyphen or not), and its spaces be any spaces
        body = r"\s+".join(_LINE_BREAK.join(_CLASSES.get(c) or re.escape(c) for c in part)
                           for part in words.split())
        before = r"(?<![^\W_])" if _word(words[0]) else ""
        after = r"(?![^\W_])" if _word(words[-1]) else ""
        in_words = re.compile(before + body + after)
    in_run = re.compile("".join(_CLASSES.get(c) or re.escape(c) for c in run))
    loose = _SQUASH.sub("", words.translate(_LOOSE))
    return in_words, in_run, letters >= SQUASH_FLOOR, loose, run.translate(_LOOSE)


def shows_read_off(text: str, names: Iterable[str]) -> bool:
    """Whether OCR's ``text`` spells one of the (folded) ``names``."""
    if not text:
        return False
    words, run, _ = ocr_spellings(text)
    loose_words, loose_run = _SQUASH.sub("", words.translate(_LOOSE)), run.translate(_LOOSE)
    for name in names:
        if not name.strip():
            continue
        in_words, in_run, long_enough, name_words, name_run = _spelled(name)
        if name_words in loose_words and in_words.search(words):
            return True
        if long_enough and name_run in loose_run and in_run.search(run):
            return True
    return False


def _word(c: str) -> bool:
    return c.isalnum()
