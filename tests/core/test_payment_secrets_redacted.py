"""Payment secrets in any string of an audit record: an IBAN (the redactor did not know them: a transfer's
arguments or a bank tool's result kept the account in clear), a card number split over a JSON array's
strings or given as a JSON number, a card's security code after a label the redactor did not read ("CVN",
"Kartenprüfnummer", "код безопасности") or in an argument named so. Honest ids stay whole."""

from __future__ import annotations

import unicodedata

import pytest

from sentinel_mcp.core.redactor import redact_record, scrub_text

IBAN_DIGITS = "370400440532013000"  # DE89 3704 0044 0532 0130 00 passes mod-97


def digits_of(text: str) -> str:
    return "".join(str(unicodedata.decimal(c)) for c in str(text) if c.isdecimal())


def everywhere(value: object) -> dict:
    """A record holding ``value`` as an argument, a result's error, a reason and a proof's string."""
    return redact_record({"arguments": {"note": value}, "error": f"transfer failed: {value}",
                          "reason": f"refused {value}", "proof": {"args": [value]}})


def fields(row: dict) -> list[str]:
    return [str(row["arguments"]), row["error"], row["reason"], str(row["proof"])]


@pytest.mark.parametrize("iban", [
    "DE89370400440532013000", "DE89 3704 0044 0532 0130 00", "de89 3704 0044 0532 0130 00",
    "de89370400440532013000", "De89 3704 0044 0532 0130 00", "DE89-3704-0044-0532-0130-00",
    "DE89 - 3704 - 0044 - 0532 - 0130 - 00", "DE89.3704.0044.0532.0130.00", "DE89 37 04 00 44 05 32 01 30 00",
    "DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000",
    "ＤＥ８９ ３７０４ ００４４ ０５３２ ０１３０ ００",
    "GB29 NWBK 6016 1331 9268 19", "gb29nwbk60161331926819", "FR14 2004 1010 0505 0001 3M02 606",
    "IBAN:DE89370400440532013000.", "(de89-3704-0044-0532-0130-00)",
])
def test_an_iban_is_masked_in_every_field(iban: str) -> None:
    row = everywhere(iban)
    tail = digits_of(iban)[-4:]
    for text in fields(row):
        assert digits_of(text).count(digits_of(iban)[4:10]) == 0, (iban, text)
        # which account it was, not the account
        assert "iban" in text.lower() and tail in digits_of(text), (iban, text)


def test_an_ibans_mark_is_left_whole_after_a_secret_key() -> None:
    """(The pair rule masked its value from the mark's bracket to the next space: "[redacted] ****3000]".)"""
    assert scrub_text("token: DE89370400440532013000 ok") == "token: [iban ****3000] ok"


@pytest.mark.parametrize("text", [
    "DE89370400440532013001",  # the check fails
    "XX89370400440532013000",  # no country of the registry
    "de12abcd textview text view",  # a lowercase run of words
    "e-de12abcd TextView text='0162 12.06 #162' res=part162",
    "sha256:de8937040044053201300052fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035",
    "build de89370400440532013000x", "version 1.2.3-de89",
])
def test_honest_letters_and_digits_are_kept(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize("args", [
    {"card": ["4111", "1111", "1111", "1111"]},
    {"card": ["4111 1111", "1111 1111"]},
    {"card": [4111, 1111, 1111, 1111]},
    {"card": 4111111111111111},
    {"pan": {"p1": "4111", "p2": "1111", "p3": "1111", "p4": "1111"}},
    {"card": ["4111-1111", "1111-1111"]},
])
def test_a_card_number_split_over_an_array_or_given_as_a_number_is_masked(args: dict) -> None:
    row = redact_record({"arguments": args})
    assert "11111111" not in digits_of(row["arguments"]).replace("1111", "1111"), row
    assert digits_of(row["arguments"]).count("1111") <= 1, row  # its last four at most


@pytest.mark.parametrize("args", [
    {"ids": ["1234", "5678", "9012", "3456"]},  # fails Luhn
    {"order": 1234567812345678}, {"port": 8080, "count": [1, 2, 3]},
    # short numbers a list or an object holds many of: only a whole value spelling one number is read
    {"years": [2020, 2021, 2022, 2023, 2024, 2025, 2026, 2027, 2028, 2029]},
    {"ports": ["8080", "8443", "9090", "3000", "5000", "4111", "1111", "1111", "1111", "1234"]},
    {"box": {"left": 0, "top": 1080, "right": 2400, "bottom": 1928}},
])
def test_honest_arrays_and_numbers_are_kept(args: dict) -> None:
    """(The 16-digit order fails Luhn; the years 2023-2026 and the box's 13 digits pass it, but only a whole
    array is read, and an object's numbers are not parts.)"""
    assert redact_record({"arguments": args})["arguments"] == args


def test_an_iban_spelled_over_an_array_is_masked() -> None:
    row = redact_record({"arguments": {"to": ["DE89", "3704", "0044", "0532", "0130", "00"]}})
    assert row["arguments"]["to"][-1] == "[iban ****3000]" and "3704" not in str(row), row


@pytest.mark.parametrize("text", [
    "CVN: 123", "CVN2 123", "CVV2: 123", "CVC 123", "cvc:123", "CVV737", "Kartenprüfnummer: 123",
    "KARTENPRÜFNUMMER 123", "код безопасности 123", "Код безопасности: 123", "Security code (3 digits): 123",
    "código de seguridad 123", "セキュリティコード 123",
])
def test_a_security_code_after_its_label_is_masked(text: str) -> None:
    row = everywhere(text)
    for field in fields(row):
        assert "123" not in digits_of(field) and "737" not in digits_of(field), (text, field)


@pytest.mark.parametrize("name", ["cvn", "CVN2", "cvv2", "Kartenprüfnummer", "card_verification",
                                  "securityCode", "csc", "card-code"])
def test_an_argument_named_for_a_security_code_is_a_secret(name: str) -> None:
    row = redact_record({"arguments": {name: "123"}, "error": "declined: 123 refused"})
    assert row["arguments"][name] != "123", row
    assert "123" not in row["error"], row


@pytest.mark.parametrize("text", ["CVS 123 pharmacy", "cid 42", "room 123", "codec h264 at 1080p"])
def test_numbers_beside_other_words_are_kept(text: str) -> None:
    assert scrub_text(text) == text


@pytest.mark.parametrize("args", [
    {"cvc": "737", "note": "the three digits on the back: 737"},
    {"password": "hunter2-lime", "repeat": "hunter2-lime"},
    {"cvn": 737, "items": [{"memo": "code 737 as asked"}]},
])
def test_a_secret_arguments_value_repeated_in_another_argument_is_masked(args: dict) -> None:
    """A secret argument's value was masked in the reason, proof and error, but kept in its siblings."""
    row = redact_record({"arguments": args})
    assert "737" not in str(row["arguments"]) and "hunter2" not in str(row["arguments"]), row


def test_an_integer_too_long_to_write_is_kept_as_it_is() -> None:
    """(A card is 13-19 digits: an integer of 5,000 digits is not written out to be read, which raises.)"""
    big = 10**5000
    row = redact_record({"arguments": {"n": big, "ns": [big, big, 4111]}})
    assert row["arguments"] == {"n": big, "ns": [big, big, 4111]}
