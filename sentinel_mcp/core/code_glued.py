"""Where a one-time code stands glued to the word that speaks of it ("Kod482913", "Bestätigungscode482913",
"OTP482913", "Kod482913abc"): a 4-8 digit run right after a word of letters (any script's) that ends with one
of the code words (``code_words.py``), or is one of the short ones ("otp", "pin", "tan"), no digit after it
(letters may follow).

Digits inside a hash or an id are not cut: a hex digest, a UUID, a certificate's fingerprint hold the
letters a-f alone, and every code word holds a letter outside them ("kod", "code", "verif", ...), so no run of
hex letters ends with one (``tests/core/test_glued_codes_redacted.py`` checks the list). A version
("v1.2.3", "python3.12") is no code word's, and one glued to a word that ends like one ("Unicode15.1.0")
is spelled with dots, which a glued code's groups are not. The cost is a match per digit run glued to a
letter."""

from __future__ import annotations

import re

from sentinel_mcp.core.code_words import SHORT_WORDS, folded_words

# (a space or a dash between its groups, never a dot: "Unicode15.1.0", "codec2.1.0.4" are versions)
_SEP = r"(?:[ \u00a0\u2009\u202f]|[ ]?[-\u2010\u2011\u2012\u2013\u2014][ ]?)"
# a run of 4-8 digits right after a letter, no digit after it (letters may follow: "Kod482913abc" is the code
# and a word glued on to slip it by; the word before is what tells a code from an id), the letter looked back
# at from the first digit (a pattern opening with a digit skips a text's other characters fast)
_GLUED = re.compile(rf"[0-9](?<=[^\W\d_][0-9])(?:{_SEP}?[0-9]){{3,7}}(?![0-9])")
_WORD_BEFORE = re.compile(r"[^\W\d_]{1,40}\Z")
_ENDINGS = tuple(w for w in folded_words() if " " not in w and "-" not in w)
_WHOLE = frozenset(SHORT_WORDS)


def glued_code_spans(folded: str, letters: str) -> list[tuple[int, int]]:
    """(start, end) of each code glued to its word in ``folded`` (ASCII digits), whose letters ``letters``
    (``code_words.fold_letters`` of it: the same length) are read for the word."""
    out = []
    for m in _GLUED.finditer(folded):
        word = _WORD_BEFORE.search(letters, max(0, m.start() - 40), m.start())
        if word is not None and (word.group().endswith(_ENDINGS) or word.group() in _WHOLE):
            out.append(m.span())
    return out
