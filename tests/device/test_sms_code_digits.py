"""A one-time code written in another script's digits is a code: "Your code is ４８２９１３" (fullwidth, as
Japanese services write it), "٤٨٢٩١٣" (Arabic-Indic), "४८२९१३" (Devanagari) were shown in clear by
sms_list (only ASCII 0-9 was looked for) and, not being among the inbox's codes, could be forwarded by
sms_send. Each decimal digit of any script is read as its value, the text's other characters kept as they
are."""

from __future__ import annotations

import pytest

from device_tools.one_time_codes import carries_code, codes_in, has_code, mask_codes

CODE = "482913"
SCRIPTS = {
    "ascii": "0123456789",
    "fullwidth": "０１２３４５６７８９",
    "arabic-indic": "٠١٢٣٤٥٦٧٨٩",
    "extended arabic-indic": "۰۱۲۳۴۵۶۷۸۹",
    "devanagari": "०१२३४५६७८९",
    "bengali": "০১২৩৪৫৬৭৮৯",
    "mathematical": "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗",
}


def written(code: str, digits: str) -> str:
    return "".join(digits[int(c)] for c in code)


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_a_code_in_any_scripts_digits_is_masked_and_known(script):
    code = written(CODE, SCRIPTS[script])
    for body, shown in ((f"Your code is {code}", "Your code is ••••••"),
                        (f"G-{code[:3]} {code[3:]} is your verification code",
                         "G-••• ••• is your verification code")):
        assert has_code(body)
        assert mask_codes(body) == (shown, 1), body
        assert codes_in([body]) == {CODE}
    assert carries_code(f"here: {code}", codes_in([f"Your code is {code}"]))


def test_text_around_a_code_is_kept_as_written():
    body = "Ｙｏｕｒ code is ４８２９１３ — ｔｈａｎｋｓ"
    assert mask_codes(body) == ("Ｙｏｕｒ code is •••••• — ｔｈａｎｋｓ", 1)


def test_digits_without_a_code_word_are_left_alone():
    for body in ("see you at ４８２９", "٤٨٢٩١٣ steps today"):
        assert mask_codes(body) == (body, 0)
        assert codes_in([body]) == set()
