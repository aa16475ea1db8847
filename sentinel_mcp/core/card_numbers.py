"""Where a text holds a payment card number, however it is spaced: 13-19 digits (of any script) in runs joined
by anything but a letter or a digit ("4111 1111", "4111.1111", "4111/1111", "4111_1111", "4111  --  1111", a
line break, invisible characters: how many does not matter, a field that strips them reads a card), passing
the Luhn check. The runs of one group are tried in every window of whole runs, so a
number beside another ("call 555 0100, 4111 1111 1111 1111") is still found. Linear in the text: a window
never spans more than 19 digits. Used by the device firewall (typed text, SMS) and the redactor (records)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate

def _runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of every run of decimal digits (any script's: int() reads them all)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text[i].isdecimal():
            j = i
            while j < n and text[j].isdecimal():
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


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


def card_windows(text: str, group: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The card numbers in ``group`` (runs of ``text`` its caller found joined, by its own rule: the screen's
    masking joins fewer characters than the firewall does)."""
    return _in_group(text, group)


def holds_card_number(text: str) -> bool:
    return bool(card_spans(text))
