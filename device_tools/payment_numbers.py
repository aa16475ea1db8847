"""Payment secrets in screen text, masked: a card number, an IBAN, a card's security code.

* A card number as a screen draws it (``card_numbers.card_spans_as_drawn``: 13-19 digits of any script
  passing Luhn, in runs of three or more joined by a few spaces, dashes, dots, slashes, a line break between
  two labels or the ``|`` Sentinel puts between a row's labels; a date's or a phone's short runs part them).
* An IBAN as ``core/iban_numbers.py`` finds it (the records' redactor reads the same): a registry's
  country, two check digits and 11-30 letters or digits passing mod-97, in capitals or small letters, spaced
  or not.
* A security code is 3 or 4 digits after one of the words a card form labels it with
  (``core/card_codes.py``: CVC, CVV, CVN, CID, CSC, and "security code" in a few languages).

Masking keeps the text's length and every character but the masked letters and digits (each one a ``•``),
and of a card number or IBAN the last four: "•••• •••• •••• 4242". Cost: one pass over the text per kind
(10 KB over 1,000 labels: a few milliseconds; ``tests/device/test_payment_numbers_on_screen.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from sentinel_mcp.core.card_codes import code_spans as card_code_spans
from sentinel_mcp.core.card_numbers import card_spans_as_drawn
from sentinel_mcp.core.iban_numbers import iban_spans

PAYMENT = "payment_numbers"  # the screen kind a caller holds to see them as drawn
MASK = "•"
KEEP = 4  # a card number's or IBAN's last characters shown: which card it is, not the card
_DIGITS = re.compile(r"\d+")

def _fold(text: str) -> str:
    """One character for each: any script's decimal digit as its ASCII digit, a full-width or other
    compatibility letter as its plain one (a character NFKC makes several of is left as it is)."""
    if text.isascii():
        return text
    out = []
    for c in text:
        if c.isascii():
            out.append(c)
        elif c.isdecimal():
            out.append(str(unicodedata.decimal(c)))
        else:
            n = unicodedata.normalize("NFKC", c)
            out.append(n if len(n) == 1 and n.isascii() else c)
    return "".join(out)


def code_spans(text: str, folded: str | None = None) -> list[tuple[int, int]]:
    """(start, end) of every security code after its label word (``core/card_codes.py``)."""
    folded = (_fold(text) if folded is None else folded).casefold()
    if len(folded) != len(text):
        return []  # (casefold made a character two: "ß"; read per character instead)
    return card_code_spans(folded)


def mask_text(text: str) -> tuple[str, int]:
    """``text`` with its payment secrets masked, and how many were."""
    if _DIGITS.search(text) is None:
        return text, 0
    folded = _fold(text)
    cased = folded.casefold()
    marks = [(a, b, KEEP) for a, b in (*card_spans_as_drawn(folded), *iban_spans(folded))]
    if len(cased) == len(text):
        marks += [(a, b, 0) for a, b in code_spans(text, folded)]
    if not marks:
        return text, 0
    chars = list(text)
    for a, b, keep in marks:
        shown = [i for i in range(a, b) if chars[i].isalnum()]
        for i in shown[:len(shown) - keep]:
            chars[i] = MASK
    return "".join(chars), len(marks)


def holds_secret(texts: Sequence[str]) -> bool:
    """Whether adjacent ``texts`` show a payment secret."""
    return bool(texts) and mask_text("\n".join(texts))[1] > 0


def mask_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` (adjacent labels, in the order the screen draws them) each masked, a number running from one
    label into the next found whole."""
    joined = "\n".join(texts)
    masked, found = mask_text(joined)
    if not found:
        return list(texts)
    out, at = [], 0
    for t in texts:
        out.append(masked[at:at + len(t)])
        at += len(t) + 1
    return out
