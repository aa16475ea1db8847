"""``form_values``: a text a browser keeps goes as itself, any other as its digest, found again among the
stored texts; the two spellings never meet."""

from __future__ import annotations

import pytest

from sentinel_mcp.console.form_values import sent_value, stored_text

ODD = ["a\nb", "a\r\nb", "a\rb", "x\x00y", "tab\tx", "#plain", "#", "a\ud800", "\x85next"]


@pytest.mark.parametrize("text", ODD)
def test_a_text_the_browser_would_change_goes_by_a_digest_and_is_found_again(text):
    sent = sent_value(text)
    assert sent.startswith("#") and len(sent) == 65 and sent.isascii()
    assert stored_text(sent, ["other", *ODD]) == text


def test_a_plain_text_goes_as_itself_and_an_unknown_digest_finds_nothing():
    assert sent_value("trip/../weather") == "trip/../weather" and sent_value("é ☃ *") == "é ☃ *"
    assert stored_text("weather", ["weather"]) == "weather"
    assert stored_text("#" + "0" * 64, ODD) == "#" + "0" * 64
    assert len({sent_value(t) for t in ODD}) == len(ODD)
