"""Where a text holds a payment card's security code (CVC, CVV, ...): 3 or 4 digits standing apart after one
of the words a card form labels it with, in the same label or the next, or glued to it ("CVV737"). Unlike a
card number it has no check digit: the word is all there is to find it by, and a code whose label is not
one of these is not found. Used by the device's screen masking and the records' redactor (which also treats
an argument named by one of the words as a secret: ``names_a_card_code``)."""

from __future__ import annotations

import re

from sentinel_mcp.core.code_words import fold_letters

# the networks' own names of it and "security code" in a few languages (casefolded, accents kept: the text
# is read casefolded, not folded of its accents)
LABELS = (
    "cvc", "cvc2", "cvv", "cvv2", "cvn", "cvn2", "cvd", "cid", "csc", "cav2", "security code", "card code",
    "card verification", "sicherheitscode", "prüfnummer", "kartenprüfnummer", "código de seguridad",
    "código de segurança", "cryptogramme", "codice di sicurezza", "beveiligingscode", "kod bezpieczeństwa",
    "säkerhetskod", "sikkerhedskode", "güvenlik kodu", "код безопасности", "cvv-код", "セキュリティコード",
    "보안코드",
)
# a word too common as a name of something else to make an argument secret ("cid": a content or client id)
_NOT_NAMES = ("cid",)


def _label(word: str) -> str:
    """A label as a pattern, standing apart before (its first word looked back at from its end: a pattern
    opening with the labels' letters skips a text's other characters fast)."""
    first, *rest = word.split(" ")
    return "".join([re.escape(first), rf"(?<!\w{re.escape(first)})", *(r"\s+" + re.escape(w) for w in rest)])


_CODE = re.compile("(?:" + "|".join(_label(w) for w in LABELS)
                   + r")(?![^\W\d])[^\w]{0,12}?(?:\([^()\n]{0,24}\)[^\w]{0,6})?([0-9]{3,4})(?![0-9\w])")
_STEMS = frozenset(w[:3] for w in LABELS)  # a text holding none of them holds no label: no scan
_NAMES = frozenset(fold_letters(w).replace(" ", "").replace("-", "") for w in LABELS if w not in _NOT_NAMES)


def code_spans(cased: str) -> list[tuple[int, int]]:
    """(start, end) of every security code in ``cased``: a text casefolded with ASCII digits, one character
    for one of the text it stands for."""
    if not any(stem in cased for stem in _STEMS):
        return []
    return [m.span(1) for m in _CODE.finditer(cased)]


def names_a_card_code(name: str) -> bool:
    """Whether an argument's name is one of the labels ("cvn", "Kartenprüfnummer", "security-code")."""
    glued = re.sub(r"[\s_.-]+", "", fold_letters(name))
    return glued in _NAMES
