"""The names the phone knows in text read off the screen's pixels (OCR), as OCR spells them.

OCR breaks a name over lines and words ("Home-" / "Net 5G", "H o m e N e t"), drops accents and emoji, and
reads look-alikes for one another (0 for O, 1 or I for l, rn for m). A name is matched on both sides' letters
and digits alone, in one run (every space, line break and mark gone), with those look-alikes folded into one:
an allow list of OCR's confusions (``_LOOK_ALIKE``), applied to the name and the text alike.
Without spaces a word has no edges: a name counts this way from ``SQUASH_FLOOR`` letters on ("home" would be
in "go home page" and "homepage"); a shorter one counts as a whole word of the folded text (``shows_name``).

Cost: one pass over the text (10 KB of it against 512 names: a few milliseconds), then one substring search
per name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from .network_names import shows_name

SQUASH_FLOOR = 6
# a character OCR reads for another, folded to one of them (letters and digits only: a word's edges stay)
_LOOK_ALIKE = str.maketrans({"0": "o", "1": "l", "i": "l", "5": "s", "8": "b"})
# and in the run: a stroke read for an l (not a letter), an m read as rn and a w as vv, spelled out (folding
# the pair into one letter would take the r of the word before a name beginning with n: "hier" + "nachbar")
_STROKES = str.maketrans({"|": "l", "!": "l"})
_SPELLED_OUT = str.maketrans({"m": "rn", "w": "vv"})
_NOT_LETTERS = re.compile(r"[\W_]+")


def _plain(text: str) -> str:
    """Compatibility forms and case folded, accents and invisible format characters dropped."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    return "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Cf"))


def ocr_spellings(text: str) -> tuple[str, str, int]:
    """``text`` with OCR's look-alikes folded: its words kept apart, its letters and digits in one run, and
    how many letters and digits it has."""
    plain = _plain(text)
    run = _NOT_LETTERS.sub("", plain.translate(_STROKES).translate(_LOOK_ALIKE))
    return plain.translate(_LOOK_ALIKE), run.translate(_SPELLED_OUT), len(run)


def shows_read_off(text: str, names: Iterable[str]) -> bool:
    """Whether OCR's ``text`` spells one of the (folded) ``names``."""
    if not text:
        return False
    spelled = [ocr_spellings(n) for n in names]
    words, run, _ = ocr_spellings(text)
    if shows_name(words, [w for w, _, _ in spelled]):
        return True
    return any(letters >= SQUASH_FLOOR and r in run for _, r, letters in spelled)
