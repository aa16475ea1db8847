"""A tool call's text or key not in Unicode's composed form (NFC) is refused before the guard
(``wire_limits.walk_value``, ``one_reading``): it reads to a person as its canonical equivalent, and an
upstream that normalizes runs on that, while a rule comparing to an atom sees other code points. Refused, not
normalized: the tool runs on the very text the guard judged, which is the text sent. Every spelling class,
each way round; what NFC leaves alone (compatibility forms, zero-width characters, other scripts' look-alikes)
is one text to every reader and is kept (a rule that wants them folded asks for it)."""

from __future__ import annotations

import pytest

from sentinel_mcp.core.wire_limits import walk_value

REFUSED = {
    "a combining mark (NFD)": "cafe\u0301",
    "NFC and NFD mixed": "\u00e9e\u0301",
    "conjoining Hangul jamo": "\u1100\u1161",
    "jamo, leading and vowel and trailing": "\u1100\u1161\u11a8",
    "the Kelvin sign": "\u212a",
    "the Ohm sign": "\u2126",
    "the Angstrom sign": "\u212b",
    "two marks out of canonical order": "c\u0301\u0327",
    "two marks in order, not composed": "c\u0327\u0301",
    "a composition exclusion (Devanagari qa)": "\u0958",
    "a CJK compatibility ideograph": "\uf900",
    "a Greek question mark (a singleton to ;)": "\u037e",
}
KEPT = {
    "its composed form": "caf\u00e9",
    "a Hangul syllable": "\uac00",
    "the composed c with cedilla and acute": "\u1e09",
    "fullwidth letters": "\uff43\uff41\uff46\u00e9",
    "a ligature": "\ufb01",
    "a superscript": "x\u00b2",
    "a zero-width space": "ca\u200bfe",
    "an emoji joined by ZWJ": "\U0001f468\u200d\U0001f469",
    "a Cyrillic look-alike": "p\u0430ypal",
    "a right-to-left override": "a\u202eb",
}


@pytest.mark.parametrize("text", REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize("where", ["value", "key", "nested value", "in a list"])
def test_a_text_not_in_nfc_is_refused_wherever_it_is(text: str, where: str) -> None:
    arguments = {"value": {"a": text}, "key": {text: 1}, "nested value": {"a": {"b": [1, {"c": text}]}},
                 "in a list": {"a": ["x", text]}}[where]
    problem = walk_value(arguments, 32, one_reading=True)[0]
    assert problem is not None and "NFC" in problem, (text, problem)
    assert walk_value(arguments, 32)[0] is None  # a message's own walk keeps it: arguments alone are judged


@pytest.mark.parametrize("text", KEPT.values(), ids=KEPT.keys())
def test_a_text_in_nfc_is_kept(text: str) -> None:
    assert walk_value({"a": text, text: [text]}, 32, one_reading=True)[0] is None
