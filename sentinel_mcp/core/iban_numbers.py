"""Where a text holds an IBAN (ISO 13616): a country of the IBAN registry, two check digits and 11-30 letters
or digits, whose mod-97 check holds, ending where a group ends (the next character no letter or digit).

Spelled as people write it: in capitals or not, unspaced or in groups apart by spaces (any: no-break, thin,
invisible), dashes or dots, up to ``MAX_SEP`` of them between two characters. A candidate in capitals may be
grouped any way ("DE89 37 04 00 44..."); one with a small letter ("de89 3704 ...") only as one word or in
groups of four (as banks print it): a lowercase run of words beside a lowercase id ("e-de12abcd textview
text") must not make 20 letters and digits that pass mod-97 by chance (one candidate in 97 does). Used by the
device's screen masking and the records' redactor; both fold the text first (any script's digits as ASCII,
one character for one), so a span of the fold is the span of the text."""

from __future__ import annotations

import re

MAX_SEP = 3
_SEP = r"[\s\u00a0\u2007\u2009\u202f\u200b\u2060.\u2010-\u2014-]"
# the countries of the IBAN registry (SWIFT's list of 2024): two letters a text holds by chance rarely
# name one
_COUNTRIES = frozenset("""AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG ES FI FK FO
FR GB GE GI GL GR GT HN HR HU IE IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MN MR MT MU NI NL NO
OM PK PL PS PT QA RO RS RU SA SC SD SE SI SK SM SO ST SV TL TN TR UA VA VG XK YE""".split())
_CANDIDATE = re.compile(
    rf"(?<![A-Za-z0-9])[A-Za-z]{{2}}[0-9]{{2}}(?:{_SEP}{{0,{MAX_SEP}}}[A-Za-z0-9]){{11,30}}", re.ASCII
)


def mod97(alnum: str) -> bool:
    """ISO 7064's check of an IBAN's letters and digits (ASCII), read whole (``_passing_ends`` carries it
    along instead; a test checks they agree)."""
    moved = alnum[4:] + alnum[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def iban_spans(folded: str) -> list[tuple[int, int]]:
    """(start, end) of every IBAN in ``folded`` (ASCII digits), left to right: of each candidate the longest
    prefix ending at a group's end whose check holds, within the line it starts in first (a label after an
    IBAN, "00\\nIBAN\\nDE89", can make a longer one pass by chance), over the next line only when that holds
    none (a number an app draws over two labels)."""
    spans: list[tuple[int, int]] = []
    at = 0
    while (m := _CANDIDATE.search(folded, at)) is not None:
        a, b = m.span()
        at = a + 1  # (the next one may start inside this candidate: it runs on over 30 characters)
        if folded[a:a + 2].upper() not in _COUNTRIES:
            continue
        ends = _passing_ends(folded, a, b)
        line = folded.find("\n", a, b)
        within = [e for e in ends if line < 0 or e <= line]
        end = within[-1] if within else ends[-1] if ends else None
        if end is not None:
            spans.append((a, end))
            at = end
    return spans


def _passing_ends(folded: str, a: int, b: int) -> list[int]:
    """The ends, left to right, of the prefixes of the candidate ``folded[a:b]`` that are an IBAN: at a
    group's end (the next character no letter or digit), 15-34 letters and digits, spaced as printed if it
    holds a small letter, passing mod-97. One walk: the check's remainder carried along (the four characters
    it moves to the end added at each end), so a candidate costs a step a character, not a check of each
    prefix."""
    c1, c2 = (int(c, 36) for c in folded[a:a + 2])
    head = (c1 * 100 + c2) * 100 + int(folded[a + 2:a + 4])  # the country's letters and the check digits
    ends, rest, count, lower = [], 0, 4, not folded[a:a + 2].isupper()
    groups_of_four, group, groups = True, 4, 1  # (the first group holds the country and check digits)
    for i in range(a + 4, b):
        ch = folded[i]
        if not ch.isalnum():
            if group:
                groups_of_four, group = groups_of_four and group == 4, 0
            continue
        if not group:
            groups += 1
        group += 1
        count += 1
        lower = lower or ch.islower()
        v = int(ch, 36)
        rest = (rest * (10 if v < 10 else 100) + v) % 97
        if i + 1 < len(folded) and folded[i + 1].isalnum():
            continue  # (not a group's end)
        printed = groups == 1 or (groups_of_four and group <= 4)
        if 15 <= count <= 34 and (printed or not lower) and (rest * 1_000_000 + head) % 97 == 1:
            ends.append(i + 1)
    return ends
