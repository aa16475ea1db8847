"""The records' redactor masks a one-time code however its message speaks of it, with the device's own list
of code words (``core/code_words.py``): "Tu código es 482913" in an sms_send's body, "您的验证码是482913" in
a tool's error, were kept in clear in the audit row (the redactor knew English words only)."""

from __future__ import annotations

import unicodedata

import pytest
from tests.device.test_sms_code_words import BODIES

from sentinel_mcp.core.redactor import redact_record, scrub_text


def digits_of(text: str) -> str:
    return "".join(str(unicodedata.decimal(c)) for c in text if c.isdecimal())


@pytest.mark.parametrize("body", BODIES)
def test_a_code_in_any_language_is_masked_in_an_audit_row(body: str) -> None:
    row = redact_record({"arguments": {"body": body}, "reason": f"refused: {body}", "error": body})
    for field in (row["arguments"]["body"], row["reason"], row["error"]):
        assert "482" not in digits_of(field) and "913" not in digits_of(field), (body, field)


@pytest.mark.parametrize("text", ["room 4829, floor 2", "order 2024-12-06 shipped", "build 1234 passed"])
def test_numbers_far_from_any_code_word_are_kept(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize("word", [
    # a certificate's sha256 (CI saw it cut)
    "52fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035367a73d5298cc36",
    "sha256 52fa2631c3084f57", "build a1b2c3d4e5f60718", "id_code 9f1234abc",
])
def test_digits_inside_a_latin_word_are_no_code(word):
    assert scrub_text(word) == word
    assert "482913" not in scrub_text(f"code: 482913\n{word}")
