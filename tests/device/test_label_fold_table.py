"""The label fold reads Unicode's own table (``core/confusable_table``: ``confusables.txt`` as published, the
one the skeletons and person keys read), not ``confusable_homoglyphs``' JSON, and reads a capital by what it
looks like as a capital. On main a label all in Greek capitals that reads "PAYMENT" (Ρ Α Υ Μ Ε Ν Τ) folded to
"pauuevt" (each capital case-folded first: a small mu reads as u, a small nu as v) and was rated as any word,
and Hebrew and Arabic letters TR39 reads as l, o, v (an alef for the l of "Delete") were missing."""

from __future__ import annotations

import functools
import unicodedata

import pytest

from device_tools.firewall import ActionFirewall
from device_tools.label_fold import _LOOK_ALIKES, fold
from device_tools.risk_rules import RiskRules
from sentinel_mcp.core.confusable_table import prototypes
from sentinel_mcp.core.display_text import is_hidden
from tests.device.test_risk_rules import click


@functools.cache
def _reads(prototype: str) -> frozenset[str]:
    """What a character of ``prototype``'s class may fold to: the prototype, or an ASCII member of its class
    (TR39 puts I, 1 and | with l: a capital I-shape reads as the i of "INSTALL")."""
    members = {fold(a) for a, p in prototypes().items() if a.isascii() and p == prototype}
    return frozenset({fold(prototype)} | members)


def _visible_entries() -> list[tuple[str, str]]:
    """Every entry of the table whose prototype is one Latin letter or digit and whose source a fold sees:
    not hidden (dropped), not a mark or a spacing form of one (its mark is dropped: "ö" is "o")."""
    out = []
    for source, prototype in prototypes().items():
        if source.isascii() or is_hidden(source) or not (prototype.isascii() and prototype.isalnum()):
            continue
        if len(prototype) != 1:
            continue
        plain = unicodedata.normalize("NFKD", source)
        if any(unicodedata.combining(c) or c.isspace() for c in plain):
            continue
        out.append((source, prototype))
    assert len(out) > 1300  # the whole file, not a part of it
    return out


def _read_as(source: str, prototype: str) -> bool:
    """Whether the fold reads ``source`` as TR39 does, or as compatibility forms make it a Latin letter (a
    long "ſ" is an s to NFKC, an f to TR39: either is a reading)."""
    made = unicodedata.normalize("NFKC", source)
    return fold(source) in _reads(prototype) or (made.isascii() and fold(source) == made.lower())


@pytest.mark.parametrize("start", range(4))
def test_every_entry_of_unicodes_table_reads_as_its_prototype(start: int) -> None:
    wrong = [(f"U+{ord(s):04X}", unicodedata.name(s, "?"), p, fold(s))
             for s, p in _visible_entries()[start::4] if ord(s) not in _LOOK_ALIKES and not _read_as(s, p)]
    assert not wrong, wrong


def test_the_hand_table_reads_as_unicodes_but_for_a_stroke():
    """The hand-written floor agrees with the table wherever both read a letter, but for the Cyrillic small
    palochka: a stroke with no dot, which a reader takes for an l (TR39 14.0 pairs it with i)."""
    table = dict(_visible_entries())
    differ = sorted(c for c in map(chr, _LOOK_ALIKES) if c in table and not _read_as(c, table[c]))
    assert differ == ["\u04cf"]


@pytest.mark.parametrize("look_alike, plain", [
    ("\u03a1\u0391\u03a5\u039c\u0395\u039d\u03a4", "PAYMENT"),  # Greek capitals only: no script is mixed
    ("\u03a4R\u0391\u039dSF\u0395R", "TRANSFER"),
    ("S\u0397\u0391R\u0395", "SHARE"),
    ("\u0399NST\u0391LL", "INSTALL"),  # a capital iota is the I of a capital word, not an l
    ("De\u0627ete", "Delete"),  # an Arabic alef
    ("\u0412U\u0423", "BUY"),
])
def test_a_look_alike_spelling_is_rated_as_the_word(look_alike: str, plain: str) -> None:
    assert fold(look_alike) == plain.lower()
    for rate in (ActionFirewall().assess, RiskRules().assess):
        assert rate(click(look_alike, "com.example.shop")).risk == rate(click(plain, "com.example.shop")).risk


@pytest.mark.parametrize("honest", [
    "\u0394\u0399\u0391\u0393\u03a1\u0391\u03a6\u0397", "\u0423\u0414\u0410\u041b\u0418\u0422\u042c",
    "\u05de\u05d7\u05e7", "\u062d\u0630\u0641", "\u0627\u0644\u063a\u0627\u0621 \u0647\u0644\u0627",
    "\u524a\u9664",
])
def test_an_honest_label_of_another_script_names_no_risky_word(honest: str) -> None:
    """Delete in Greek and Russian capitals, Hebrew, Arabic, Japanese: folded, no keyword of the firewall."""
    from device_tools.firewall import KEYWORDS, _words

    assert not _words(honest) & KEYWORDS.keys(), fold(honest)
