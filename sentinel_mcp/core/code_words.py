"""The words a message speaks of a one-time code with, in many languages and scripts, and how a text is read
for them: the device's SMS masking (``device_tools/one_time_codes.py``) and the records' redactor
(``redactor.py``) read one list alike.

A text is folded one character for one character (``fold_letters``: a span of the fold is the same span of
the text): compatibility forms as their letters ("ＣＯＤＥ", "𝐜𝐨𝐝𝐞"), accents dropped ("código", "kód",
"doğrulama"), lower case, an invisible format character as a space. A word is found inside longer words too
("Bestätigungscode", "engångskod", "kodunuz", "验证码是"); a short Latin word only standing apart ("pin",
never "shopping"). The list cannot be complete: the SMS rule also masks any bare group from a service's
sender, and the audit keeps its other patterns.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["CODE_WORDS", "PASSWORD_WORDS", "SHORT_WORDS", "code_word_spans_near", "fold_letters",
           "folded_words", "holds_a_code_word", "speaks_of_a_code"]

# the words for a password (or a PIN, a secret word) in the same languages: a message speaks of a code with
# them, and an argument or a ``key=value`` pair named with one holds a secret (``redactor.secret_name``)
PASSWORD_WORDS = (
    "password", "passwort", "kennwort", "contrasena", "senha", "mot de passe", "heslo", "hasło", "haslo",
    "jelszo", "sifre", "losenord", "adgangskode", "salasana", "wachtwoord", "пароль", "парол", "密码", "密碼",
    "口令", "暗証", "パスワード", "비밀번호", "암호", "المرور", "کلمه عبور", "סיסמ", "पासवर्ड",
)
CODE_WORDS = PASSWORD_WORDS + (
    # Latin scripts (as folded: no accents, lower case)
    "code", "codigo", "codice", "cod ", "kode", "kod", "kood", "koodi", "passcode", "clave", "parola",
    "verif", "one-time", "onetime", "one time", "login", "log-in", "log in", "signin", "sign-in", "sign in",
    "security", "authentic", "authentif", "bestatigung", "sicherheit", "dogrulama", "xac thuc", "xac minh",
    "engang", "einmal",
    # Greek, Cyrillic
    "κωδικ", "код", "подтвержд",
    # Han, kana, hangul
    "验证", "驗證", "认证", "認證", "認証", "校验码", "校驗碼", "动态码", "動態碼", "确认码", "確認碼",
    "安全码", "安全碼", "コード", "確認番号", "ワンタイム", "인증", "코드",
    # Arabic, Persian, Urdu, Hebrew
    "رمز", "كود", "کد", "کوڈ", "التحقق", "קוד", "אימות",
    # Indic, Thai
    "कोड", "ओटीपी", "सत्यापन", "কোড", "ওটিপি", "யீடு", "ఓటీపీ", "కోడ్", "รหัส",
)
# words that count only standing apart from the letters a-z ("pin", never "shopping")
SHORT_WORDS = ("otp", "pin", "tan", "mtan", "2fa", "mfa", "totp")
_SHORT = re.compile(r"(?<![a-z])(?:" + "|".join(SHORT_WORDS) + r")(?![a-z])")


@functools.lru_cache(maxsize=8192)
def _letter(ch: str) -> str:
    if ch.isascii():
        return ch.lower()
    if unicodedata.category(ch) == "Cf":
        return " "
    nf = unicodedata.normalize("NFKC", ch)
    ch = nf if len(nf) == 1 else ch
    d = unicodedata.normalize("NFKD", ch)
    if len(d) > 1 and all(unicodedata.combining(c) for c in d[1:]):
        ch = d[0]
    low = ch.lower()
    return low if len(low) == 1 else ch


def fold_letters(text: str) -> str:
    """``text`` as the words are looked for in it, one character for each of its own."""
    return text.lower() if text.isascii() else "".join(_letter(c) for c in text)


_FOLDED = tuple(sorted({fold_letters(w) for w in CODE_WORDS}))


def folded_words() -> tuple[str, ...]:
    """The words as looked for (``fold_letters`` of each), read by a rulebase too (``code_word_table.py``)."""
    return _FOLDED


_ASCII = tuple(w for w in _FOLDED if w.isascii())  # what an ASCII text can hold
_SHORT_STEMS = ("otp", "pin", "tan", "2fa", "mfa")
_ANY = re.compile("|".join(re.escape(w) for w in _FOLDED) + "|" + _SHORT.pattern)


def speaks_of_a_code(text: str) -> bool:
    """Whether the text holds one of the words (``fold_letters`` of it)."""
    return holds_a_code_word(fold_letters(text))


def holds_a_code_word(letters: str) -> bool:
    """``speaks_of_a_code`` of a text already folded (``fold_letters``): substring tests first (a long text
    with none of the words costs a scan per word, not a regular expression of all of them)."""
    words = _ASCII if letters.isascii() else _FOLDED
    if any(w in letters for w in words):
        return True
    return any(w in letters for w in _SHORT_STEMS) and _SHORT.search(letters) is not None


def code_word_spans_near(folded: str, start: int, end: int, reach: int) -> list[tuple[int, int]]:
    """(start, end) of each word within ``reach`` characters of ``folded[start:end]``."""
    return [m.span() for m in _ANY.finditer(folded, max(0, start - reach), min(len(folded), end + reach))]
