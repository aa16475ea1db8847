"""Marked text crosses into data (a JSON tool result the guard reads, an audit row) raw (``unmarked``), and is
marked once where it is shown: showing the raw text again gives the very marks it had, whatever it holds, and
only Sentinel's marks are undone (a typed-out "⟨U+0041⟩" in a wrongly built ``Marked`` is no mark)."""

from __future__ import annotations

import pytest

from sentinel_mcp.core.display_text import Marked, compose, safe_text, shown, unmarked

SPELLINGS = ["report\u202efdp.exe", "Book⟨x⟩", "⟨U+202E⟩", "a\x1b[2Jb", "zero\u200bwidth", "〈U+202E〉",
             "tag\U000E0041s", "line\u2028sep", "plain", "", "a\ud800b"]


@pytest.mark.parametrize("raw", SPELLINGS)
def test_raw_text_marked_again_reads_as_marked_once(raw: str) -> None:
    marked = safe_text(raw)
    back = unmarked(marked)
    assert type(back) is str
    assert safe_text(back) == marked or "\ud800" in raw  # a lone surrogate comes back as U+FFFD
    joined = compose("x: ", marked, " (", raw, ")")
    assert safe_text(unmarked(joined)) == joined or "\ud800" in raw


def test_a_cut_and_a_plain_str_and_a_non_mark() -> None:
    cut = unmarked(safe_text("x" * 50, 10))
    assert cut == "x" * 10 + "… (40 more characters not shown)" and "⟨" not in safe_text(cut)
    assert unmarked("⟨U+202E⟩") == "⟨U+202E⟩"  # a plain str is raw: nothing to undo
    assert unmarked(Marked("⟨U+0041⟩")) == "⟨U+0041⟩"  # not a character Sentinel marks: no mark of its
    assert shown(unmarked(Marked("⟨U+0041⟩"))).brackets == 2
