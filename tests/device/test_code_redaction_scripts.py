"""Red team 'device' 6, redaction: a one-time code escaped the records' redactor when it was written in
another script's digits, in fullwidth letters, split by an invisible character, or on the line after its
word. A card number was found in any script (``card_numbers.py``); a code only in ASCII on the same line:
"Your code is ١٢٣٤٥٦" (an Arabic-locale SMS), "ＯＴＰ：１２３４５６" (a fullwidth keyboard),
"Your code:\\n123456" (most SMS codes) were kept in clear in the audit record. The redactor now reads
every text through a fold of one character per character (any script's decimal digit as its digit, what
NFKC makes one character as it, invisible format characters as spaces), so what it masks is the same span
of the text as written."""

from __future__ import annotations

import pytest

from sentinel_mcp.core.redactor import redact_record, scrub_text

CODES = [
    "Your code is 482913",  # the plain spelling, always masked
    "Your code is ٤٨٢٩١٣",  # Arabic-Indic digits
    "Your code is ۴۸۲۹۱۳",  # Extended Arabic-Indic (Persian)
    "Your code is ४८२९१३",  # Devanagari
    "Your code is ４８２９１３",  # fullwidth digits
    "ＯＴＰ：４８２９１３",  # fullwidth keyword, colon and digits
    "𝐜𝐨𝐝𝐞 482913",  # mathematical bold letters
    "Your code: 48\u200b29\u200b13",  # invisible joiners inside the run
    "code\u2060: 482913",  # an invisible character inside the word's neighbourhood
    "Your verification code:\n482913",  # the code on the next line
    "Your verification code:\r\n482913",
    "٤٨٢٩١٣ is your verification code",  # the code first, another script
    "482 913 is your code",  # the code first, spaced
    "pin\u00a0482913",  # a no-break space
]
DIGITS = "482913"


def _ascii_digits(text: str) -> str:
    import unicodedata

    return "".join(str(unicodedata.decimal(c)) for c in text if c.isdecimal())


@pytest.mark.parametrize("text", CODES)
def test_a_one_time_code_is_masked_in_any_spelling(text) -> None:
    out = scrub_text(text)
    assert DIGITS not in _ascii_digits(out), (text, out)
    assert "[code]" in out, (text, out)


@pytest.mark.parametrize("text", CODES[:6])
def test_the_mask_covers_the_text_as_written_and_keeps_the_rest(text) -> None:
    """The masked span is the one in the text as written (the fold is one character per character): the
    words around it are kept as they were, not folded."""
    out = scrub_text("Dear Ann, " + text + " — thanks")
    assert out.startswith("Dear Ann, ") and out.endswith(" — thanks"), out


def test_an_audit_record_keeps_no_code_of_another_script() -> None:
    record = {"arguments": {"body": "Your code is ٤٨٢٩١٣", "note": "ＯＴＰ：４８２９１３"}, "reason": "ok"}
    out = redact_record(record)
    assert "٤٨٢٩١٣" not in str(out) and "４８２９１３" not in str(out), out


@pytest.mark.parametrize(
    "text",
    [
        "Meeting at 10:30 in room 4821",  # no code word: numbers are left alone
        "Order 48291322 shipped",
        "Die Postleitzahl ist 10115",  # no code word
        "Your ticket ٤٨ is ready",  # too few digits
    ],
)
def test_numbers_without_a_code_word_are_left_alone(text) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize(
    "text", ["ｐａｓｓｗｏｒｄ＝hunter2", "password\u200b: hunter2", "Ｂｅａｒｅｒ abcdefghijkl"]
)
def test_secret_pairs_and_bearer_tokens_in_fullwidth_or_with_invisible_characters(text) -> None:
    out = scrub_text(text)
    assert "hunter2" not in out and "abcdefghijkl" not in out, out
