"""The IBAN finder's one walk over a candidate (``iban_numbers._passing_ends``: the mod-97 remainder and the
spacing carried along) finds what checking each prefix whole finds, over many random texts of IBANs, their
pieces, letters of both cases and separators."""

from __future__ import annotations

import random
import re

from sentinel_mcp.core import iban_numbers
from sentinel_mcp.core.iban_numbers import iban_spans, mod97


def _by_each_prefix(folded: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    at = 0
    while (m := iban_numbers._CANDIDATE.search(folded, at)) is not None:
        a, b = m.span()
        at = a + 1
        if folded[a:a + 2].upper() not in iban_numbers._COUNTRIES:
            continue
        ends = [i + 1 for i in range(a, b) if folded[i].isalnum() and (i + 1 == len(folded)
                                                                      or not folded[i + 1].isalnum())]
        line = folded.find("\n", a, b)
        for end in [*reversed([e for e in ends if line < 0 or e <= line]),
                    *reversed([e for e in ends if 0 <= line < e])]:
            piece = folded[a:end]
            alnum = "".join(c for c in piece if c.isalnum())
            groups = re.findall(r"[A-Za-z0-9]+", piece)
            printed = len(groups) == 1 or (all(len(g) == 4 for g in groups[:-1]) and len(groups[-1]) <= 4)
            if 15 <= len(alnum) <= 34 and (alnum.isupper() or printed) and mod97(alnum.upper()):
                spans.append((a, end))
                at = end
                break
    return spans


def _valid(rng: random.Random) -> str:
    country = rng.choice(sorted(iban_numbers._COUNTRIES))
    bban = "".join(rng.choice("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" if rng.random() < 0.2 else "0123456789")
                   for _ in range(rng.randint(11, 30)))
    check = 98 - int("".join(str(int(c, 36)) for c in bban + country + "00")) % 97
    return f"{country}{check:02d}{bban}"


def _spelled(rng: random.Random, iban: str) -> str:
    text = iban.lower() if rng.random() < 0.3 else iban
    if rng.random() < 0.5:
        sep = rng.choice([" ", "-", " - ", ".", "\u00a0", "\n", "  "])
        text = sep.join(text[i:i + rng.choice([4, 4, 4, 2, 3, 5])] for i in range(0, len(text), 4))
    return text


def test_the_walk_finds_what_each_prefix_checked_whole_finds() -> None:
    rng = random.Random(20261206)
    found = 0
    for _ in range(3000):
        pieces = []
        for _ in range(rng.randint(1, 6)):
            kind = rng.random()
            if kind < 0.4:
                pieces.append(_spelled(rng, _valid(rng)))
            elif kind < 0.7:
                pieces.append(_spelled(rng, _valid(rng))[: rng.randint(4, 30)])
            else:
                pieces.append("".join(rng.choice("abDE12 -\n.x9") for _ in range(rng.randint(1, 20))))
        text = rng.choice([" ", "", "\n", " | "]).join(pieces)
        assert iban_spans(text) == _by_each_prefix(text), text
        found += bool(iban_spans(text))
    assert found > 1000  # (the texts do hold IBANs)

