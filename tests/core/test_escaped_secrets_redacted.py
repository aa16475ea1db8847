"""Red team 'records' 9: spellings of a secret the redactor still kept (``redact_record``), and what must stay
readable beside them. A secret behind an escape (HTML character references, ``\\u0034``, quoted-printable
with its soft line breaks), base64 wrapped in MIME or PEM lines, a card or password written as hex bytes, a
split card after many JSON objects (or objects that fail late) in an error text, two keys masked to one
text, card parts under keys differing by a letter or a word, a card over an array of arrays of digits, a
token as a URL's user, ``pw=`` in a query, HTTP Basic credentials. Readable: a year or a date beside a code
word, ids, times, digests, UUIDs, phones, amounts, harmless escapes."""

from __future__ import annotations

import base64
import json
import quopri
import re
import sys
import unicodedata

import pytest

from sentinel_mcp.core.redactor import redact_record, scrub_text

PASSWORD = "hunter2-Zq9xW"
CARD = "4111 1111 1111 1111"


def digits_of(text: object) -> str:
    return "".join(str(unicodedata.decimal(c)) for c in str(text) if c.isdecimal())


def stored(arguments: object) -> str:
    """Every field a record stores, the arguments repeated in the reason and error as they are."""
    text = json.dumps(arguments, ensure_ascii=False)
    row = redact_record({"arguments": arguments, "reason": f"refused {text}", "error": f"failed: {text}"})
    return json.dumps(row, ensure_ascii=False)


def no_card(text: str) -> bool:
    """Whether no card's digits are left (its mark keeps the last four)."""
    return "1111" not in digits_of(re.sub(r"\[card[^\]]*\]", "", text))


def entities(text: str, form: str) -> str:
    return "".join(form % ord(c) for c in text)


@pytest.mark.parametrize("text", [
    "card " + entities(CARD, "&#%d;"),
    "card " + entities(CARD, "&#x%x;"),
    "card " + entities(CARD, "&#X%X"),  # (no semicolon: browsers read it)
    "card " + entities(CARD, "\\u%04x"),
    "card " + entities(CARD, "\\x%02x"),
    "card " + entities(CARD, "\\u{%x}"),
    "card " + entities(CARD, "\\U%08x"),
    "card " + entities(CARD, "&amp;#%d;"),  # (escaped twice)
    "card 4111&nbsp;1111&nbsp;1111&nbsp;1111",
    "card 4111=\n1111=\r\n1111=\n1111",  # (quoted-printable's soft line breaks)
])
def test_a_card_behind_escapes_is_masked(text: str) -> None:
    out = stored({"note": text})
    assert no_card(out) and "[card ****1111]" in out, out


@pytest.mark.parametrize("text", [
    f"pass\\u0077ord={PASSWORD}",
    f"password&#61;{PASSWORD}",
    f"password&equals;{PASSWORD}",
    f"&#112;&#97;&#115;&#115;&#119;&#111;&#114;&#100;: {PASSWORD}",
    f"pass=\nword=3D{PASSWORD}",
    quopri.encodestring(f"contraseña={PASSWORD}".encode()).decode(),
    f"{{&quot;password&quot;: &quot;{PASSWORD}&quot;}}",
    f"{{\\u0022password\\u0022: \\u0022{PASSWORD}\\u0022}}",
])
def test_a_password_behind_escapes_is_masked(text: str) -> None:
    assert PASSWORD not in stored({"note": text}) and "hunter2" not in stored({"note": text})


def mime(data: bytes, width: int) -> str:
    b64 = base64.b64encode(data).decode()
    return "\n".join(b64[i:i + width] for i in range(0, len(b64), width))


@pytest.mark.parametrize("body", [
    mime(("x" * 50 + f" password={PASSWORD} " + "y" * 100).encode(), 76),  # (astride a line's end)
    mime(("x" * 40 + f" card {CARD} " + "y" * 100).encode(), 64),
    mime(("x" * 50 + f" password={PASSWORD} " + "y" * 100).encode(), 76).replace("\n", "\r\n"),
    "Content-Transfer-Encoding: base64\n\n" + mime(f"token={PASSWORD}\n".encode() * 8, 76) + "\n--b--",
])
def test_base64_wrapped_in_lines_is_read_joined(body: str) -> None:
    out = stored({"mail": body})
    assert "[redacted base64" in out and not any(
        "password" in (d or "") or "4111" in (d or "") for d in _line_decodings(out)), out


def _line_decodings(out: str) -> list[str | None]:
    decoded = []
    for line in json.loads(out)["arguments"]["mail"].splitlines():
        try:
            decoded.append(base64.b64decode(line + "=" * (-len(line) % 4)).decode("utf-8", "replace"))
        except ValueError:
            decoded.append(None)
    return decoded


@pytest.mark.parametrize("text", [
    "data " + "4111111111111111".encode().hex(),
    "data " + "4111111111111111".encode().hex().upper(),
    "data " + " ".join(f"{b:02x}" for b in CARD.encode()),
    "data " + ":".join(f"{b:02x}" for b in CARD.encode()),
    "data 0x" + f"password={PASSWORD}".encode().hex(),
])
def test_a_secret_written_as_hex_bytes_is_masked(text: str) -> None:
    out = stored({"note": text})
    assert "[redacted hex" in out and "3431313131" not in out.replace(" ", "").replace(":", ""), out


def split_card(**others: object) -> dict[str, object]:
    return {**others, "card_1": "4111", "card_2": "1111", "card_3": "1111", "card_4": "1111"}


@pytest.mark.parametrize("decoys", [
    '{"a": 1} ' * 16, '{"a": 1} ' * 500, "[1, 2] " * 40, '{"a": ' * 40, "[[" * 3_000 + " x ",
    '{"a": [1, 2, ' * 30 + " oops ",
])
def test_a_split_card_after_decoy_objects_in_an_error_is_masked(decoys: str) -> None:
    error = "failed: " + decoys + json.dumps(split_card(name="Bob"))
    out = redact_record({"arguments": {}, "error": error})["error"]
    assert out.endswith('"card_4": "[card ****1111]"}'), out[-300:]


@pytest.mark.parametrize("keys", [
    ["card_a", "card_b", "card_c", "card_d"], ["cardA", "cardB", "cardC", "cardD"],
    ["card a", "card b", "card c", "card d"], ["pan_first", "pan_second", "pan_third", "pan_fourth"],
    ["Karte_ä", "Karte_ö", "Karte_ü", "Karte_ß"],
])
def test_card_parts_under_keys_differing_by_a_letter_or_word_are_masked(keys: list[str]) -> None:
    for parts in (["4111", "1111", "1111", "1111"], [4111, 1111, 1111, 1111]):
        value = {"name": "Bob", **dict(zip(keys, parts)), "amount": 12}
        out = json.loads(stored(value))["arguments"]
        assert [out[k] for k in keys] == ["[card]"] * 3 + ["[card ****1111]"] and out["name"] == "Bob", out


@pytest.mark.parametrize("value", [
    [[4, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]],
    [["4", "1", "1", "1"], ["1", "1", "1", "1"], ["1", "1", "1", "1"], ["1", "1", "1", "1"]],
    [[4, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1]],
])
def test_a_card_over_arrays_of_its_digits_is_masked(value: list) -> None:
    assert no_card(stored({"digits": value})), stored({"digits": value})


def test_keys_masked_to_one_text_keep_every_value() -> None:
    value = {"4111 1111 1111 1111": "first", "4111-1111-1111-1111": "second", "[card ****1111]": "third",
             "x": {"code 123456": 1, "code 654321": 2}}
    out = json.loads(stored(value))["arguments"]
    assert sorted(map(str, out.values()))[:3] == ["first", "second", "third"] and len(out) == 4, out
    assert sorted(out["x"].values()) == [1, 2] and no_card(json.dumps(out)), out


@pytest.mark.parametrize("text", [
    f"https://{PASSWORD}@example.com/repo.git", f"git+https://{PASSWORD}@example.com/x",
    f"https://x.example/cb?pw={PASSWORD}", f"https://x.example/cb?user=bob&PW={PASSWORD}",
    "Authorization: Basic " + base64.b64encode(f"bob:{PASSWORD}".encode()).decode(),
    "curl -H 'authorization: basic " + base64.urlsafe_b64encode(f"bob:{PASSWORD}".encode()).decode() + "'",
])
def test_credentials_in_a_url_or_header_are_masked(text: str) -> None:
    out = stored({"note": text})
    encoded = base64.b64encode(f"bob:{PASSWORD}".encode()).decode()
    assert PASSWORD not in out and encoded[:12] not in out and encoded[:12].replace("+", "-") not in out, out


@pytest.mark.parametrize("text", [
    "code review 2024", "code review on 2024/05/22", "Security review 2024: all passed",
    "code 482913 expires 2024/12/01", "Sicherheitscode gültig bis 31.12.2026", "code sent 05/12/2026",
    "verification email of 12-06-2026", "booking code 4WQ150 on 2024.05.22",
])
def test_a_date_or_a_year_beside_a_code_word_stays_readable(text: str) -> None:
    out = scrub_text(text)
    assert re.sub(r"482913", "[code]", text) == out, out


@pytest.mark.parametrize("text", [
    "code 1987", "code: 2024", "Your code is 2024", "Kod weryfikacyjny: 1987", "2024 is your code",
    "code 2024/13/45", "code: 2024 05 22",
])
def test_a_year_that_may_be_the_code_stays_masked(text: str) -> None:
    assert "[code]" in scrub_text(text) and "19" + "87" not in scrub_text(text), scrub_text(text)


@pytest.mark.parametrize("value", [
    {"note": "Tom &amp; Jerry &#8211; S01E02 at 10:30, count=10, path C:\\users\\x01"},
    {"digest": "sha256 52fa2631c3084f57a31ab4eede77e4dfee960abe5cb18a035367a73d5298cc36"},
    {"hex": "deadbeefcafebabe0011223344556677", "mac": "00:1a:2b:3c:4d:5e:6f:70"},
    {"uuid": "550e8400-e29b-41d4-a716-446655440000", "phone": "+1 (555) 010-4421", "amount": "$1,234.56"},
    {"amounts": ["EUR 4.111,11", "1 111,11 kr"], "time": "2024-05-22T10:30:00Z", "id": "ord_4111111"},
    {"text": "basic information about the 2024 flight", "url": "https://example.com/a?b=1#c"},
    {"mail": mime(b"hello world, flight HAT170 on 2024-05-22, seat 12A, no secrets in here at all.", 20)},
    {"box_x": 4000, "box_y": 3000, "box_w": 1920, "box_h": 1080},
    {"seat_a": "12", "seat_b": "14", "row_a": "1956", "row_b": "0707"},
    {"grid": [[1, 2, 3], [4, 5, 6], [7, 8, 9]]},
])
def test_ids_times_digests_amounts_and_harmless_escapes_stay_readable(value: dict) -> None:
    assert json.loads(stored(value))["arguments"] == value


@pytest.mark.parametrize("text", [
    "&#52;" * 3_000, "&amp;" * 3_000, "\\u0034" * 2_000, "=3D" * 3_000, "ab=\n" * 2_000, "34" * 5_000,
    "34 " * 3_000, "[[" * 3_000, '{"a": ' * 2_000, '{"a": 1} ' * 1_000,
    ("QUJDREVGR0hJSktMTU5PUA==" * 3 + "\n") * 300,
])
def test_the_normalisation_is_linear_in_its_input(text: str) -> None:
    """Python calls made reading a text and reading ten of it (no clock: the machine is shared)."""
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


@pytest.mark.parametrize("value", [
    {"pass\\u0077ord": PASSWORD}, {"pass&#119;ord": PASSWORD}, {"login": {"&#112;assword": PASSWORD}},
    {"password": PASSWORD, "note": "hunter&#50;-Zq9xW"}, {"pwd": PASSWORD, "note": "hunter\\u0032-Zq9xW"},
    {"key": "  " + mime(("x" * 50 + f" password={PASSWORD} " + "y" * 60).encode(), 64).replace("\n", "\n  ")},
])
def test_escaped_names_known_secrets_escaped_and_indented_base64_are_masked(value: dict) -> None:
    out = stored(value)
    assert PASSWORD not in out and "hunter2" not in out and "hunter&#50;" not in out, out
    assert "hunter\\\\u0032" not in out and "cGFzc3dv" not in out, out
