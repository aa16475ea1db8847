"""Brackets are marked by an allow list: every bracket and quotation mark of Unicode (categories Ps, Pe, Pi,
Pf), and every symbol named as a single angle, arrowhead or less-/greater-than sign, is shown as
``⟨U+XXXX⟩`` unless it is one of a few ordinary ones; so a value cannot type one of Sentinel's marks out with
a bracket nobody thought to list."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from sentinel_mcp.core.display_text import Marked, compose, safe_text, shown
from sentinel_mcp.core.mark_brackets import BRACKET_CATEGORIES, SHOWN_RAW, passes_for_mark_bracket

REAL = shown("report\u202efdp.exe").text  # report⟨U+202E⟩fdp.exe


def _all_characters() -> list[str]:
    return [chr(cp) for cp in range(sys.maxunicode + 1) if not 0xD800 <= cp <= 0xDFFF]


def test_every_bracket_and_quote_of_unicode_is_allow_listed_or_marked() -> None:
    brackets = [ch for ch in _all_characters() if unicodedata.category(ch) in BRACKET_CATEGORIES]
    assert len(brackets) > 170  # the categories really are iterated (178 in Unicode 14)
    raw = [ch for ch in brackets if not passes_for_mark_bracket(ch)]
    assert set(raw) <= SHOWN_RAW, [f"U+{ord(c):04X}" for c in raw if c not in SHOWN_RAW]
    for ch in brackets:  # and what is shown agrees with the rule, character by character
        s = shown(f"a{ch}b")
        assert (s.text == f"a{ch}b") == (ch in SHOWN_RAW), f"U+{ord(ch):04X}"
        assert s.brackets == (ch not in SHOWN_RAW)


def test_the_allow_list_is_small_explicit_and_holds_no_single_angle() -> None:
    assert SHOWN_RAW == frozenset("()[]{}<>“”‘’„‚‟‛«»‹›「」『』（）")
    for ch in SHOWN_RAW:
        name = unicodedata.name(ch)
        # a single angle bracket of any Unicode name is never raw; ASCII < > and ‹ › are the documented
        # exceptions (code and markup; running text's guillemets and Sentinel's own section paths)
        if ch not in "<>‹›":
            assert "ANGLE" not in name or "DOUBLE" in name, name


def test_symbols_that_pass_for_an_angle_bracket_are_marked() -> None:
    for ch in "＜＞﹤﹥˂˃˱˲⸖⟨⟩〈〉〈〉❬❭❮❯❰❱⧼⧽⦑⦒︿﹀⟪⟫《》":
        assert passes_for_mark_bracket(ch), f"U+{ord(ch):04X} {unicodedata.name(ch)}"
        assert shown(ch).text == f"⟨U+{ord(ch):04X}⟩"
    # and characters merely named for an angle that cannot be drawn like one are not: a math angle, an
    # L-shaped right angle, relations with a second stroke, a letter of a script
    for ch in "∠∟≤≥≪⋖ᐸᐳ→⇒":
        assert not passes_for_mark_bracket(ch), f"U+{ord(ch):04X} {unicodedata.name(ch)}"


@pytest.mark.parametrize("opening, closing", [
    ("⟪", "⟫"), ("《", "》"), ("【", "】"), ("〔", "〕"), ("⦅", "⦆"), ("｢", "｣"), ("⸨", "⸩"), ("༼", "༽"),
    ("⁽", "⁾"), ("⌈", "⌉"), ("︽", "︾"), ("˂", "˃"),
])
def test_a_mark_typed_with_any_unlisted_bracket_never_reads_like_a_real_one(opening: str,
                                                                            closing: str) -> None:
    forged = shown(f"report{opening}U+202E{closing}fdp.exe")
    assert forged.text != REAL and forged.brackets == 2
    assert forged.text == f"report⟨U+{ord(opening):04X}⟩U+202E⟨U+{ord(closing):04X}⟩fdp.exe"


def test_sentinels_own_marking_brackets_in_hostile_text_are_always_marked() -> None:
    for typed in ("⟨U+202E⟩", "x⟩y", "⟨", "…⟨40 more characters not shown⟩"):
        out = safe_text(typed)
        assert "⟨U+27E8⟩" in out or "⟨U+27E9⟩" in out
        assert out.count("⟨") == out.count("⟨U+")  # every ⟨ left opens a mark of Sentinel's
    # Sentinel's own text around a value keeps its brackets; the value's are marked
    joined = compose(Marked("Allow ⟨U+202E⟩ in "), "⟨U+202E⟩", "?")
    assert joined == "Allow ⟨U+202E⟩ in ⟨U+27E8⟩U+202E⟨U+27E9⟩?"


def test_ordinary_text_stays_readable() -> None:
    for text in ('call f(x)[0] with {"a": 1} <b>', "“quoted” ‘single’ „low“ ‚low‘", "« fr » ‹ ch ›",
                 "Book flight › Passengers", "「日本」『語』（注）"):
        s = shown(text)
        assert s.text == text and not s.changed, text


@pytest.mark.parametrize("limit", range(1, 40))
def test_a_marked_text_cut_never_cuts_one_of_its_marks(limit: int) -> None:
    """A text already marked (``⟨U+200B⟩`` in it) and cut where it is shown again: the cut falls before a mark
    and never inside it ("⟨U+20" then the cut's own mark would read as a broken or typed-out mark)."""
    marked = compose("ab", Marked(shown("\u200bcd\u202eef\u200b").text), "gh")
    s = shown(marked, limit)
    body = s.text.split("…⟨")[0] if s.cut else s.text
    assert body.count("⟨") == body.count("⟩"), (limit, s.text)
    assert marked.startswith(body)
    assert len(body) + s.cut == len(marked)  # what is not shown is counted, not lost
