"""Which characters of a value can pass for the brackets of Sentinel's marks (``⟨U+XXXX⟩``).

An allow list, not a list of look-alikes: a value's character is marked when it is a bracket or a quotation
mark (Unicode categories Ps, Pe, Pi, Pf: every opening and closing bracket, every initial and final quote,
so one a font draws like ``⟨`` or a future Unicode adds is marked without naming it here), or a symbol or
punctuation mark (categories S*, P*) whose name says it is a single left/right angle, arrowhead or
less-/greater-than sign (``＜``, ``﹤``, ``˂``, ``⸖``: drawn like ``<`` or ``⟨`` though not a bracket by
category); unless it is on ``SHOWN_RAW``, the ordinary punctuation of running text and code.

Left to other checks, on purpose: letters of a script that happen to be drawn like ``<`` (Canadian
syllabics ``ᐸ``: marking them would break words, and they pass for ASCII ``<``, which is raw anyway);
combining marks (drawn on the character before them, never alone); math relations with more than a single
angle in their name (``≤``, ``≪``, ``⋖``: a second stroke or a dot tells them apart).
"""

from __future__ import annotations

import re
import unicodedata

BRACKET_CATEGORIES = frozenset({"Ps", "Pe", "Pi", "Pf"})

# Shown raw, every one a bracket or quote of ordinary text that cannot be drawn like ``⟨`` ``⟩``:
# - ASCII ( ) [ ] { } < >: code, JSON and markup are full of them, and ``<`` ``>`` are not drawn like ``⟨``;
# - the quotation marks of running text: “ ” ‘ ’ „ ‚ ‟ ‛ (curved commas, not angles), « » (double: two
#   strokes cannot pass for one ``⟨``), ‹ › (small, at x-height; and the separator of Sentinel's own policy
#   section paths, "Book flight › Passengers");
# - the brackets of everyday CJK text: 「 」 『 』 (corners) and （ ） (fullwidth round ones).
SHOWN_RAW = frozenset("()[]{}<>“”‘’„‚‟‛«»‹›「」『』（）")

# a single pointing angle, arrowhead or less-/greater-than sign, by its Unicode name
_ANGLE_NAME = re.compile(r"ANGLE BRACKET|ANGLE QUOTATION|(?:LEFT|RIGHT)-POINTING ANGLE"
                         r"|(?:LEFT|RIGHT) ARROWHEAD$|(?:LESS|GREATER)-THAN SIGN$")


def passes_for_mark_bracket(ch: str) -> bool:
    """True for a character a value could use to type out one of Sentinel's marks (it is shown marked)."""
    if " " <= ch <= "~" or ch in SHOWN_RAW:
        return False  # printable ASCII is on the allow list or no bracket at all; then the rest of the list
    category = unicodedata.category(ch)
    if category in BRACKET_CATEGORIES:
        return True
    return category[0] in "SP" and _ANGLE_NAME.search(unicodedata.name(ch, "")) is not None
