"""Red team 'records' 8: spellings of a secret the redactor kept (``redact_record``), and what must stay
readable beside them. A card split over an object's numbered keys (beside other keys, nested, or over an
array's objects), a code glued to its word with letters after it, a password under a key of another
language, case or with an invisible character inside, a secret percent- or base64-encoded, in a JSON
document sent as a string (twice), a card as an object's key. One normalisation reads them all: the text's
digits and letters folded, the encodings decoded, then the same patterns; the cost stays linear."""

from __future__ import annotations

import base64
import json
import re
import sys
import unicodedata
from urllib.parse import quote

import pytest

from sentinel_mcp.core.redactor import redact_record, scrub_text

PASSWORD = "hunter2-Zq9xW"


def digits_of(text: object) -> str:
    return "".join(str(unicodedata.decimal(c)) for c in str(text) if c.isdecimal())


def stored(arguments: object) -> str:
    """Every field a record stores, the arguments repeated in the reason, proof and error as they are."""
    text = json.dumps(arguments, ensure_ascii=False)
    row = redact_record({"arguments": arguments, "reason": f"refused {text}", "proof": {"args": [arguments]},
                         "error": f"failed: {text}"})
    return json.dumps(row, ensure_ascii=False)


def four(*parts: object) -> dict:
    return {f"card_{i}": p for i, p in enumerate(parts, 1)}


@pytest.mark.parametrize("arguments", [
    four("4111", "1111", "1111", "1111"),
    {"name": "Bob", **four("4111", "1111", "1111", "1111"), "amount": 12},
    {"payment": {"holder": "Bob", **four("4111", "1111", "1111", "1111")}},
    {"cardPart1": "4111", "cardPart2": "1111", "cardPart3": "1111", "cardPart4": "1111", "cvcOk": True},
    {"pan-a1": 4111, "pan-a2": 1111, "pan-a3": 1111, "pan-a4": 1111},
    {"parts": [{"p": "4111"}, {"p": "1111"}, {"p": "1111"}, {"p": "1111"}]},
    {"parts": [{"p": "4111 11", "n": 1}, {"p": "11 1111", "n": 2}, {"p": "1111", "n": 3}]},
    [{"digits": "٤١١١"}, {"digits": "١١١١"}, {"digits": "١١١١"}, {"digits": "١١١١"}],
    four("４１１１", "１１１１", "１１１１", "１１１１"),
    {"4111111111111111": "a card as a key"},
    {"kod4829_1": "4111", "kod4829_2": "1111", "kod4829_3": "1111", "kod4829_4": "1111"},  # (keys masked too)
    {"payload": json.dumps(four("4111", "1111", "1111", "1111"))},
])
def test_a_card_split_over_keys_or_objects_is_masked(arguments: object) -> None:
    text = stored(arguments)
    values = re.sub(r'\[card[^\]]*\]|"[^"]*"\s*:', "", text)  # (the marks keep the last four; the keys)
    assert "4111" not in digits_of(values) and "****" in text, text


@pytest.mark.parametrize("text", [
    "Kod482913abc", "Twój kod482913xyz", "OTP482913abc", "código482913ab", "Код482913абв",
    "Bestätigungscode482913Ende", "ＫＯＤ４８２９１３ａｂｃ", "kod482-913abc",
])
def test_a_code_glued_to_its_word_and_followed_by_letters_is_masked(text: str) -> None:
    assert "482" not in digits_of(scrub_text(text)) and "[code]" in scrub_text(text), scrub_text(text)


@pytest.mark.parametrize("text", ["code: 2024-13-22", "kod 2024-0522", "code 1987", "code: 2024 05 22"])
def test_what_is_no_date_beside_a_code_word_stays_masked(text: str) -> None:
    assert scrub_text(text).endswith("[code]"), scrub_text(text)


@pytest.mark.parametrize("key", [
    "PASSWORD", "Passwort", "KENNWORT", "mot_de_passe", "mot-de-passe", "MotDePasse", "contraseña",
    "CONTRASEÑA", "senha", "wachtwoord", "пароль", "Пароль", "密码", "パスワード", "비밀번호",
    "ｐａｓｓｗｏｒｄ", "pass\u200bword", "pass\u00adword", "pass\u2060word", "new_Passwort_2",
    "user.contraseña",
])
def test_a_password_under_a_key_of_any_language_is_masked(key: str) -> None:
    assert PASSWORD not in stored({key: PASSWORD})
    assert PASSWORD not in stored({"note": f"{key}={PASSWORD}"}), key
    assert PASSWORD not in stored({"note": f'{{"{key}": "{PASSWORD}", "x": 1}} trailing'}), key


@pytest.mark.parametrize("name", [
    "passenger_name", "passport_number", "compass_heading", "user_id", "bypass_cache", "keyword", "code",
    "login", "reservation_id", "parolier",
])
def test_names_that_say_no_secret_keep_their_value(name: str) -> None:
    assert json.loads(stored({name: "Zq9xW-value"}))["arguments"] == {name: "Zq9xW-value"}


@pytest.mark.parametrize("url", [
    "https://x.example/cb?q=" + quote(f"password={PASSWORD}"),
    "https://x.example/cb?q=" + quote(quote(f"password={PASSWORD}")),
    f"https://x.example/cb?pass%77ord={PASSWORD}",
    "https://x.example/cb?d=" + base64.b64encode(json.dumps({"password": PASSWORD}).encode()).decode(),
    "https://x.example/cb?d=" + base64.urlsafe_b64encode(f"token={PASSWORD}".encode()).decode().rstrip("="),
    "https://x.example/cb?d=" + base64.b64encode(base64.b64encode(f"password={PASSWORD}".encode())).decode(),
])
def test_an_encoded_secret_in_a_url_is_masked(url: str) -> None:
    text = stored({"url": url})
    assert PASSWORD not in text and "hunter2" not in text, text


@pytest.mark.parametrize("url", [
    "https://x.example/cb?c=4111%201111%201111%201111", "https://x.example/cb?c=4111%2D1111%2D1111%2D1111",
    "https://x.example/cb?c=" + base64.urlsafe_b64encode(b"4111111111111111").decode(),
    "https://x.example/cb?c=" + base64.b64encode("４１１１ １１１１ １１１１ １１１１".encode()).decode(),
])
def test_an_encoded_card_in_a_url_is_masked(url: str) -> None:
    text = stored({"url": url})
    assert "1111" not in digits_of(re.sub(r"\[card[^\]]*\]", "", text)) and "NDEx" not in text, text


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_secret_in_a_json_document_inside_a_string_is_masked(depth: int) -> None:
    value: object = {"user": "bob", "password": PASSWORD, "card": "4111 1111 1111 1111"}
    for _ in range(depth):
        value = {"inner": json.dumps(value)}
    text = stored(value)
    assert PASSWORD not in text and "1111 1111" not in text and "bob" in text, text


def test_an_error_answer_holding_a_json_document_is_masked() -> None:
    row = redact_record({"arguments": {}, "error": json.dumps({"detail": {"pwd": PASSWORD}})})
    assert PASSWORD not in row["error"] and "detail" in row["error"]


@pytest.mark.parametrize("value", [
    {"reservation_id": "4WQ150", "user_id": "chen_jackson_3290", "flight_number": "HAT170"},
    {"payment_methods": [{"payment_id": "credit_card_4421486", "amount": 250}]},
    {"passengers": [{"dob": "1956-07-07"}, {"dob": "1967-04-01"}], "dates": ["2024-05-22", "2024-05-26"]},
    {"year_1": "2019", "year_2": "2020", "year_3": "2021", "year_4": "2022"},
    {"seat_1": "12", "seat_2": "14", "row_1": "1956", "row_2": "0707"},
    {"digest": "sha256:52fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035367a73d5298cc36"},
    {"uuid": "550e8400-e29b-41d4-a716-446655440000", "phone": "+1 555-010-4421"},
    {"note": "booking 4WQ150 on HAT170, 2024-05-22, seat 12A, call +1 555 010 4421"},
    {"note": "booking code 4WQ150 on 2024-05-22", "reason": "code: 2024-05-26"},  # (a date beside "code")
    {"data": "aGVsbG8gd29ybGQsIGZsaWdodCBIQVQxNzAgb24gMjAyNC0wNS0yMg=="},  # (text holding no secret)
    {"url": "https://x.example/search?q=flight%20HAT170%202024-05-22&page=2"},
    {"body": json.dumps({"reservation_id": "4WQ150", "flights": [{"date": "2024-05-22"}]})},
])
def test_ids_dates_digests_and_harmless_encodings_stay_readable(value: dict) -> None:
    assert json.loads(stored(value))["arguments"] == value


@pytest.mark.parametrize("text", [
    "1234 " * 2_000, "%41" * 3_000, "QUJDREVGR0hJSktMTU5PUA== " * 400, "code 1234 " * 1_000,
    "Kod482913abc " * 800, "pass\u200bword=" * 700, "４１１１ " * 2_000, "{" * 5_000 + "}" * 5_000,
    '{"a": [' * 100 + "1" + "]}" * 100 + " x" * 5_000,
])
def test_the_redactor_is_linear_in_its_input(text: str) -> None:
    """Python calls made reading a text and reading ten of it (no clock: the machine is shared): ten times
    the text costs about ten times the calls, never a hundred."""
    def calls(t: str) -> int:
        n = 0

        def count(frame: object, event: str, arg: object) -> None:
            nonlocal n
            n += event in ("call", "c_call")
        sys.setprofile(count)
        try:
            scrub_text(t)
        finally:
            sys.setprofile(None)
        return n

    small, large = calls(text), calls(text * 10)
    assert large <= 15 * small + 100, (small, large)
