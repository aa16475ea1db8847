"""Where a question's quoted values are: the ``“…”`` readable_terms.pl (and ``quoted_values.py``) writes
around a value someone supplied, found by its quotes, not by its spelling (a value with a closing quote,
a backslash or a line break is shown escaped, so it does not appear in the question as it was given).

Inside such a quote every closing-like mark, every ``“`` and every backslash is escaped by a backslash: a
value cannot end its own quote early, nor open one. So a span opens at a ``“`` outside any span and ends at
the first ``”`` not escaped; the text between is the value as shown. A ``“`` of the rulebase's own words with
no closing mark is not a span. (The rulebase's own words in ``“…”`` are found too: they are cut, like a
value, only when the question would not fit otherwise.)
"""

from __future__ import annotations

__all__ = ["OPEN", "CLOSE", "quoted_spans", "cut_point"]

OPEN, CLOSE = "\u201c", "\u201d"


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each quoted value's inside in ``text``: ``text[start:end]`` is between its quotes."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while True:
        i = text.find(OPEN, i)
        if i < 0:
            return spans
        j = i + 1
        while j < n and text[j] != CLOSE:
            j += 2 if text[j] == "\\" else 1
        if j >= n:
            return spans  # no closing mark: the rest is the rulebase's words
        spans.append((i + 1, j))
        i = j + 1


def cut_point(inside: str, n: int) -> int:
    """``n``, or one less when the first ``n`` characters of a quote's inside end in the middle of an escape
    (a backslash whose escaped character is cut off would escape the closing mark)."""
    k = n
    while k > 0 and inside[k - 1] == "\\":
        k -= 1
    return n - 1 if (n - k) % 2 else n
