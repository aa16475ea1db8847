"""Where a text holds a payment card number: 13-19 decimal digits (of any script) passing the Luhn check, in
runs of digits joined by what a number is spaced with. Linear in the text: a window never spans more than 19
digits. Two readings of what joins runs, one module (``tests/core/test_card_windows.py``):

* ``card_spans`` (the records' redactor, the device's firewall on typed text and SMS): anything but a letter
  ("4111 1111", "4111.1111", "4111_1111", "4111  --  1111", a line break, invisible characters: how many does
  not matter, a field that strips them reads a card), a run glued to letters too ("VISA4111111111111111",
  "card:4111-..."). A hostile writer spaces a number to slip it by, and a record loses little by a masked
  number, so it reads the most: an order id of 13-19 digits passes Luhn by chance one time in ten, and is
  masked in the record then (``[card ****5678]``: its last four kept).
* ``card_spans_as_drawn`` (the device's screen masking): runs of at least ``MIN_RUN`` digits at most
  ``MAX_GAP`` characters apart (spaces, dashes, dots, slashes, a line break between two labels, Sentinel's
  ``|`` between a row's labels); a run of one or two digits parts runs (a date's "12.06.2026", a phone's
  "+49 30": two dates side by side must not make 16 digits), and so does a short run glued to a letter (an id:
  "e-979ce871", "1Z999AA1"), but a whole card's length glued to a word is a card. What the screen masks the
  agent cannot read to act on, and the screen is drawn by an app, not spaced to slip by a filter.

The runs of one group are tried in every window of whole runs, so a number beside another ("call 555 0100,
4111 1111 1111 1111") is still found."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from itertools import accumulate

MIN_RUN = 3
MAX_GAP = 3  # characters between two runs of one number as drawn ("4000 - 0566", " | " between labels)
_JOIN_CHARS = frozenset(".-/|")
_DIGITS = re.compile(r"\d+")


def _runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of every run of decimal digits (any script's: ``\\d`` is ``str.isdecimal``, and int()
    reads them all)."""
    return [m.span() for m in _DIGITS.finditer(text)]


def _joined(text: str, end: int, start: int) -> bool:
    # only a letter parts two runs (decimal digits are in the runs; "²", "٫", a space, a dot do not)
    return not any(ch.isalpha() for ch in text[end:start])


def luhn(digits: str) -> bool:
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each card number in ``text``, left to right, not overlapping."""
    runs = _runs(text)
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(runs):
        group = [runs[k]]
        while k + len(group) < len(runs) and _joined(text, group[-1][1], runs[k + len(group)][0]):
            group.append(runs[k + len(group)])
        spans += _in_group(text, group)
        k += len(group)
    return spans


def _in_group(text: str, group: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Every window of whole runs holding 13-19 digits that passes Luhn, overlapping ones merged (a false
    window beside a true card must not leave part of the card out). Each window's Luhn sum is read off
    prefix sums (digits in place and doubled, by parity), so a text of many one-digit runs ("1 1 1 ...")
    costs a few steps a window, not a pass over its digits."""
    digits = [int(ch) for a, b in group for ch in text[a:b]]
    ends, at = [], 0  # where each run ends among ``digits``
    for a, b in group:
        at += b - a
        ends.append(at)
    # plain[p][k] / doubled[p][k]: over digits[:k] at positions of parity p, each as it is / doubled as Luhn
    dbl = [d * 2 - 9 if d > 4 else d * 2 for d in digits]
    plain, doubled = _by_parity(digits), _by_parity(dbl)
    found: list[tuple[int, int]] = []
    for i in range(len(group)):
        s = ends[i - 1] if i else 0
        # the windows from run i holding 13 to 19 digits: runs j whose end is in [s + 13, s + 19]
        for j in range(bisect_left(ends, s + 13, i), bisect_right(ends, s + 19, i)):
            e = ends[j]
            q = (e - 1) % 2  # the last digit is in place, every second one before it doubled
            total = plain[q][e] - plain[q][s] + doubled[1 - q][e] - doubled[1 - q][s]
            if total % 10 == 0:
                a, b = group[i][0], group[j][1]
                if found and a <= found[-1][1]:
                    found[-1] = (found[-1][0], max(found[-1][1], b))
                else:
                    found.append((a, b))
    return found


def _by_parity(values: list[int]) -> tuple[list[int], list[int]]:
    """Prefix sums of ``values`` at even positions and at odd ones (each list one longer than ``values``)."""
    return (
        list(accumulate((v if i % 2 == 0 else 0 for i, v in enumerate(values)), initial=0)),
        list(accumulate((v if i % 2 == 1 else 0 for i, v in enumerate(values)), initial=0)),
    )


def card_spans_as_drawn(text: str) -> list[tuple[int, int]]:
    """(start, end) of every card number in ``text`` as a screen draws it, left to right."""
    spans: list[tuple[int, int]] = []
    group: list[tuple[int, int]] = []
    for run in [*_drawn_runs(text), (len(text) + MAX_GAP + 1, len(text) + MAX_GAP + 1)]:
        if run[1] - run[0] >= MIN_RUN and group and _drawn_joins(text, group[-1][1], run[0]):
            group.append(run)
            continue
        if group and sum(b - a for a, b in group) >= 13:  # (fewer digits hold no card)
            spans += _in_group(text, group)
        group = [run] if run[1] - run[0] >= MIN_RUN else []
    return spans


def _drawn_joins(text: str, end: int, start: int) -> bool:
    gap = text[end:start]
    return len(gap) <= MAX_GAP and all(
        c.isspace() or c in _JOIN_CHARS or unicodedata.category(c) in ("Zs", "Pd", "Cf") for c in gap)


def _drawn_runs(text: str) -> list[tuple[int, int]]:
    """Every run of decimal digits (``\\d``: any script's); a short run touching a letter is a word's: it
    stands as an empty run, which parts the runs around it."""
    out = []
    n = len(text)
    for m in _DIGITS.finditer(text):
        i, j = m.span()
        touches = (i and text[i - 1].isalpha()) or (j < n and text[j].isalpha())
        out.append((i, j) if not touches or 13 <= j - i <= 19 else (i, i))
    return out


def holds_card_number(text: str) -> bool:
    return bool(card_spans(text))
