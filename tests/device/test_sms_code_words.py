"""A one-time code is masked however the SMS speaks of it: the code word in other languages and scripts
("código", "Bestätigungscode", "код", "验证码", "認証コード", "인증번호", "رمز", ...), its digits apart with
spaces or dashes ("482 - 913", "4-8-2-9-1-3"), or no code word at all in a message from a short code or an
alphanumeric sender ID (the senders services send codes from; people write from phone numbers).
Only English words and one separator between two digits were read before: these were shown in clear."""

from __future__ import annotations

import pytest

from device_tools.one_time_codes import codes_in, has_code, mask_codes

BODIES = [
    "Tu código de verificación es 482913",
    "Seu código: 482913",
    "Ihr Bestätigungscode lautet 482913",
    "Dein Sicherheitscode: 482913",
    "Votre code de connexion : 482913",
    "Il tuo codice è 482913",
    "Ваш код: 482913",
    "Код подтверждения 482913",
    "您的验证码是482913，5分钟内有效",
    "【某银行】驗證碼：482913",
    "認証コードは482913です",
    "인증번호 [482913]을 입력하세요",
    "رمز التحقق الخاص بك هو 482913",
    "קוד האימות שלך: 482913",
    "आपका ओटीपी 482913 है",
    "รหัส OTP ของคุณคือ 482913",
    "Mã xác thực của bạn là 482913",
    "Doğrulama kodunuz: 482913",
    "Twój kod weryfikacyjny to 482913",
    "Váš ověřovací kód je 482913",
    "Din engångskod är 482913",
    "Vahvistuskoodisi on 482913",
    "Kode verifikasi Anda 482913",
    "Ο κωδικός σας είναι 482913",
    "Your code is 482 - 913",
    "Your code is 482 – 913",
    "Your code is 4-8-2-9-1-3",
    "Your code is 4 8 2 9 1 3",
    "Your code is 48 29 13",
    "Your code is 482.913",
    "ＹＯＵＲ ＣＯＤＥ ４８２９１３",
]


@pytest.mark.parametrize("body", BODIES)
def test_a_code_spoken_of_in_any_language_or_spelling_is_masked(body: str) -> None:
    shown, n = mask_codes(body)
    digits = [ch for ch in shown if ch.isdecimal()]
    assert n >= 1 and not any(d in "".join(digits) for d in ("482", "913")), (body, shown)
    assert has_code(body)
    assert codes_in([body]) == {"482913"}, body


@pytest.mark.parametrize("sender", ["Google", "AMAZON", "12345", "+32665", "VM-HDFCBK"])
def test_a_bare_code_from_a_service_sender_is_masked(sender: str) -> None:
    for body in ("482913", "482913 - do not share", "Use 4829 to continue"):
        shown, n = mask_codes(body, sender)
        assert n == 1 and "4829" not in shown, (sender, body, shown)
        assert codes_in([body], [sender]) == {body.split()[1] if body.startswith("Use") else "482913"}


@pytest.mark.parametrize("body", ["see you at 4829", "call me at 5 pm, room 4829", "482913"])
def test_a_person_writing_from_a_phone_number_keeps_their_numbers(body: str) -> None:
    for sender in ("+32 470 12 34 56", "0470123456", None):
        assert mask_codes(body, sender) == (body, 0)
        assert codes_in([body], [sender]) == set()
