"""One-time codes in message text, masked unless the user allows them for one call.

A code is a run of 4-8 digits of any script (their groups apart by a space, a dash or a dot, spaces around
it too: ``G-482 913``, ``482 - 913``, ``4-8-2-9-1-3``) in a message that either

* speaks of a code, in any of many languages and scripts (``core/code_words.py``: "code" and compounds,
  "código", "codice", "kod", "код", "κωδικός", "验证码", "認証コード", "인증번호", "رمز", "קוד", "ओटीपी",
  "รหัส", ...; read with case, width and accents folded, and inside words: "Bestätigungscode",
  "engångskod", "kodunuz"), or a ``G-``/``FB-`` style prefix; or
* comes from a service's sender (``service_sender``: a short code, or an alphanumeric sender ID such as
  "Google"), where a 4-8 digit group standing apart is a code whatever words surround it: a language this
  list lacks still gets its code masked. A person writes from a phone number, and their "room 4829" stays.

The list of words cannot be complete; the sender rule is what covers the rest. Both mask more than codes
(a bank's amount, "zipcode 12345"): ``reveal_codes`` shows them with the user's consent. Masked digits
become ``•``; the rest of the message stays readable.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from itertools import zip_longest

from sentinel_mcp.core import code_words

_PREFIX = re.compile(r"\b[A-Z]{1,3}-\d")  # "G-482913", "FB-4829"
_SEP = r"(?:[ \u00a0\u2009\u202f]|[ ]?[-\u2010\u2011\u2012\u2013\u2014.][ ]?)"
_RUN = re.compile(rf"(?<![0-9])(?:[A-Z]{{1,3}}-)?[0-9](?:{_SEP}?[0-9]){{3,7}}(?![0-9])")
# a group standing apart: no letter or digit touching it, no decimal point or time before or after it
_APART = re.compile(rf"(?<![A-Za-z0-9.,:/])[0-9](?:{_SEP}?[0-9]){{3,7}}(?![A-Za-z0-9]|[.,:/][0-9])")
_SENDER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9 .&_-]{0,10}")


def speaks_of_a_code(text: str) -> bool:
    """Whether the text speaks of a code in one of ``code_words``' languages, or by a ``G-`` prefix."""
    return code_words.speaks_of_a_code(text) or bool(_PREFIX.search(ascii_digits(text)))


def service_sender(sender: str | None) -> bool:
    """A short code (3-6 digits) or an alphanumeric sender ID (letters, at most 11 characters): who services
    send codes from. A full phone number (a person's) is neither."""
    if not sender:
        return False
    s = sender.strip()
    digits = re.sub(r"[\s()+-]", "", s)
    if digits.isdigit():
        return 3 <= len(digits) <= 6
    return any(c.isalpha() for c in s) and bool(_SENDER_ID.fullmatch(s))


def ascii_digits(text: str) -> str:
    """``text`` with each decimal digit of any script ("４", "٤", "४", "𝟒") as the ASCII digit of its value,
    character for character (a match in it is where it is in ``text``): a code is written in any of them."""
    if text.isascii():
        return text
    return "".join(str(unicodedata.decimal(c)) if not c.isascii() and c.isdecimal() else c for c in text)


def _runs(text: str, sender: str | None = None) -> list[tuple[int, int]]:
    """Where the codes are in ``text`` (spans of it)."""
    if not text:
        return []
    plain = ascii_digits(text)
    if speaks_of_a_code(text):
        return [m.span() for m in _RUN.finditer(plain)]
    if service_sender(sender):
        return [m.span() for m in _APART.finditer(plain)]
    return []


def has_code(text: str, sender: str | None = None) -> bool:
    return bool(_runs(text, sender))


def mask_codes(text: str, sender: str | None = None) -> tuple[str, int]:
    """``text`` with its one-time codes masked, and how many were masked (the rest as written); ``sender``:
    the message's address (a service's sender makes any 4-8 digit group standing apart a code)."""
    spans = _runs(text, sender)
    if not spans:
        return text, 0
    parts: list[str] = []
    last = 0
    for a, b in spans:
        parts += [text[last:a], "".join("•" if c.isdecimal() else c for c in text[a:b])]
        last = b
    parts.append(text[last:])
    return "".join(parts), len(spans)


# --- a code in text someone is about to send -------------------------------------------------------------
# Forwarding a code the phone received is the classic account takeover, and a rephrasing must not slip past:
# "Here it is: 482913", "482-913", "4 8 2 9 1 3", "c0de 482913", "48two913", "4B2913", fullwidth digits. The
# text is read as a stream of digits, each position the set of digits it may stand for: real digits of any
# script, digit words, and look-alike letters inside a token that has a digit in it (a plain word's letters
# are not digits: "hello" is no number). Everything else (separators, other words) is left out, so a code
# split over the message ("482, then 913") is still whole in the stream.
_DIGIT_WORDS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])}
_DIGIT_WORDS |= {"oh": 0, "nought": 0}
_LOOK_ALIKE = {"o": "0", "d": "0", "q": "9", "i": "1", "l": "1", "j": "1", "z": "2", "e": "3", "a": "4",
               "h": "4", "s": "5", "b": "68", "g": "69", "t": "7"}
_TOKEN = re.compile(r"[^\W_]+")


def _digit_of(ch: str) -> str | None:
    value = unicodedata.digit(ch, None)
    return str(value) if value is not None else None


def digit_stream(text: str) -> list[str]:
    """``text`` as a person could read its digits: per position, the digits it may stand for."""
    stream: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()):
        spelled = _DIGIT_WORDS.get(token)
        if spelled is not None:
            stream.append(str(spelled))
            continue
        if not any(_digit_of(ch) is not None for ch in token):
            # a word: its digit words run together ("fourtwo") still count
            rest, found = token, []
            while rest:
                word = next((w for w in _DIGIT_WORDS if rest.startswith(w)), None)
                if word is None:
                    break
                found.append(str(_DIGIT_WORDS[word]))
                rest = rest[len(word):]
            if not rest and found:
                stream.extend(found)
            continue
        i = 0
        while i < len(token):
            ch = token[i]
            digit = _digit_of(ch)
            if digit is not None:
                stream.append(digit)
                i += 1
                continue
            word = next((w for w in _DIGIT_WORDS if token.startswith(w, i)), None)
            if word is not None:  # "48two913"
                stream.append(str(_DIGIT_WORDS[word]))
                i += len(word)
                continue
            if ch in _LOOK_ALIKE:  # "4B2913", "48z9l3"
                stream.append(_LOOK_ALIKE[ch])
            i += 1  # another letter mixed in ("4x8x2") is left out
    return stream


def codes_in(bodies: Iterable[str], senders: Iterable[str | None] = ()) -> set[str]:
    """The codes ``mask_codes`` masks in these messages (each with its sender, in order), as digits
    ("G-482 913" is "482913")."""
    out: set[str] = set()
    for body, sender in zip_longest(bodies, senders):
        if body:
            plain = ascii_digits(body)
            out.update(re.sub(r"[^0-9]", "", plain[a:b]) for a, b in _runs(body, sender))
    return {c for c in out if 4 <= len(c) <= 8}


def carries_code(text: str, codes: Iterable[str]) -> bool:
    """Whether ``text`` holds one of ``codes`` in any spelling (``digit_stream``)."""
    stream = digit_stream(text)
    for code in codes:
        n = len(code)
        if any(all(code[j] in stream[i + j] for j in range(n)) for i in range(len(stream) - n + 1)):
            return True
    return False


# --- the reading the gateway's rule shares (device.pl's one_time_code_text) ---------------------------------
# A text someone is about to send or type is read through code_fold (device.pl's code_fold/2, character for
# character): any script's decimal digits, fullwidth forms and mathematical styled letters as ASCII, any space
# (Python's str.isspace, as device.pl's space_code/1) and an invisible character as a space. The words are
# core/code_words.py's, which the rule reads too (policy/code_word_table.py writes them for it).
_INVISIBLE = frozenset([0xAD, 0x34F, 0x61C, 0x115F, 0x1160, 0x180E, 0x3164, 0xFEFF, 0xFFA0])
_INVISIBLE_RANGES = ((0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0xFE00, 0xFE0F),
                     (0xE0000, 0xE0FFF))
_JOINER = r"(?: |[ ]?[-\u2010\u2011\u2012\u2013\u2014._/\\][ ]?)"
_JOINED_RUN = re.compile(rf"(?<![0-9])[0-9](?:{_JOINER}?[0-9]){{3,7}}(?![0-9])")
_LEET_DIGITS = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})


def _fold_char(ch: str) -> str:
    c = ord(ch)
    if ch.isdecimal():
        return str(unicodedata.decimal(ch))
    if 0xFF01 <= c <= 0xFF5E:
        return chr(c - 0xFEE0)
    if c in _INVISIBLE or any(a <= c <= b for a, b in _INVISIBLE_RANGES) or ch.isspace():
        return " "
    if 0x1D400 <= c <= 0x1D6A3:
        i = (c - 0x1D400) % 52
        return chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26)
    return ch


def code_fold(text: str) -> str:
    """``text`` as a code is looked for in it, one character for each (device.pl's ``code_fold/2``)."""
    return "".join(_fold_char(ch) for ch in text)


def _word_char(ch: str) -> bool:  # a letter or a number of any script (unicode_category L*, N* in the rule)
    return unicodedata.category(ch)[0] in "LN"


def _leet_words(folded: str) -> str:
    """The words with the digits inside a word read as the letters they stand for ("c0de", "0TP")."""
    return " ".join(w.translate(_LEET_DIGITS) if any(unicodedata.category(c)[0] == "L" for c in w) else w
                    for w in _word_runs(folded))


def _word_runs(folded: str) -> list[str]:
    runs, cur = [], []
    for ch in folded:
        if _word_char(ch):
            cur.append(ch)
        elif cur:
            runs.append("".join(cur))
            cur = []
    if cur:
        runs.append("".join(cur))
    return runs


def _code_prefix(folded: str) -> bool:
    """A "G-482913" style prefix: 1-3 capital ASCII letters apart from a word before, a hyphen, a digit."""
    for m in re.finditer(r"[A-Z]{1,3}-[0-9]", folded):
        a = m.start()
        if a == 0 or not (_word_char(folded[a - 1]) or folded[a - 1] == "_"):
            return True
    return False


def speaks_of_code(text: str) -> bool:
    """A one-time code in text someone is about to send or type: words of a code in any of ``code_words``'
    languages (also with digits read as letters: "c0de", "0TP", "v3rification") or a ``G-`` prefix, with a
    run of 4-8 digits whose groups are joined by one space, hyphen, dot, ``_``, ``/`` or ``\\`` ("730 551",
    "730.551"). The rule device.pl applies to the same texts (tests/device/test_code_rule_parity.py)."""
    folded = code_fold(text)
    if _JOINED_RUN.search(folded) is None:
        return False
    return (code_words.speaks_of_a_code(text) or code_words.speaks_of_a_code(_leet_words(folded))
            or _code_prefix(folded))
