"""A one-time code glued to the word that speaks of it ("Kod482913", "código482913", "Код482913") was kept
in the audit: digits touching a Latin letter were read as that word's (so that a sha256's hex is not cut).
Now a run right after a code word is a code, and a digest, a UUID, a fingerprint or a version stays whole."""

from __future__ import annotations

import pytest
from tests.core.test_code_words_redacted import digits_of

from sentinel_mcp.core.code_words import SHORT_WORDS, folded_words
from sentinel_mcp.core.redactor import redact_record, scrub_text


@pytest.mark.parametrize("text", [
    "Kod482913", "kod482913", "KOD482913", "Twój kod482913", "código482913", "Código:482913", "Код482913",
    "Bestätigungscode482913", "Verifizierungscode 482913", "kood482913", "koodi482913", "OTP482913",
    "PIN4829", "TAN482913", "Kod482-913", "Kod 482 913", "Kod482913.", "(kod482913)", "κωδικός482913",
    "ＫＯＤ４８２９１３", "kod４８２９１３", "Your Code482913 expires", "code: 482.913", "kod 4829.1300",
])
def test_a_code_glued_to_its_word_is_masked(text: str) -> None:
    row = redact_record({"arguments": {"body": text}, "error": text, "reason": f"sent: {text}"})
    for field in (row["arguments"]["body"], row["error"], row["reason"]):
        assert "482" not in digits_of(field) and "913" not in digits_of(field) and "4829" not in digits_of(
            field), (text, field)


@pytest.mark.parametrize("text", [
    "52fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035367a73d5298cc36",
    "sha256:52fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035367a73d5298cc36 code",
    "kod: 550e8400-e29b-41d4-a716-446655440000", "code AB:CD:12:34:56:78:9A:BC:DE:F0:12:34:56:78:9A:BC",
    "code python3.12.1 v1.2.3 node20.11", "kod build a1b2c3d4e5f60718", "pin e2fa1234", "otp 0a2fa12345678",
    "opcode", "kod1.2.3", "Unicode15.1.0", "codec2.1.0.4", "OpenSSL-Code3.0.13.1",
    "VS Code 1.95.3", "code server at 10.0.0.12", "code sent 12.06.2026",
])
def test_hashes_ids_and_versions_beside_a_code_word_are_kept(text: str) -> None:
    assert scrub_text(text) == text


def test_no_code_word_is_spelled_with_hex_letters_alone() -> None:
    """Why a hex digest is never cut: a glued run counts after a word ending with a code word, and every code
    word holds a letter no hex digit is (a short one, "2fa", counts only as the whole word before the run:
    "e2fa1234" is read as letters "fa")."""
    hexish = set("0123456789abcdef")
    assert not [w for w in folded_words() if set(w) <= hexish]
    assert [w for w in SHORT_WORDS if set(w) <= hexish] == ["2fa"]
