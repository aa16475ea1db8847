"""The redactor: what an audit record may keep of a call's arguments, reason, proof and error.

Secrets never reach the audit log in clear, whether the call was allowed or denied:

* arguments whose name says secret (password, pin, token, api key, secret, cvv, one-time code, ...), arguments
  a tool declares sensitive (``_meta["sentinel/sensitive"]``: a list of argument names, e.g. the device's
  ``type_text.text``, which may be typed into a password field) and schema properties marked
  ``writeOnly`` or ``format: password`` (``secret_names.py``) are replaced by a mark that keeps only their
  length;
* in every string anywhere in the record: payment card numbers (13-19 digits passing the Luhn check), IBANs
  (``iban_numbers.py``), a card's security code after its label (``card_codes.py``), one-time codes (a 4-8
  digit run next to "code", "otp", "pin", ..., or glued to such a word: ``code_glued.py``), bearer tokens,
  JWTs, ``NAME=value`` pairs whose NAME says secret (``DB_PASSWORD=``, ``"password": ...``, ``contraseña:``)
  and a URL's ``user:password@``, in any script; a card number or IBAN that a whole array or object spells
  over its parts, or an object's numbered keys or an array's objects (``split_numbers.py``), or an integer
  is; what a percent-encoded, base64 (over MIME's lines too) or hex piece, or a JSON document inside a string
  (``embedded_json.py``), hides (``encoded_text.py``), and what a text reads as with its escapes undone
  (``escaped_text.py``: ``&#52;``, ``\\u0034``, ``=3D``); an object's keys are read as its values are (two
  masked alike kept apart);
* and every value found secret above is scrubbed from the other arguments, the reason, proof and error too
  (a proof tree or a question repeats the arguments it was proved with).

Pure functions over plain data: the audit writer (or any other record builder) calls ``redact_record``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from sentinel_mcp.core.card_codes import code_spans as card_code_spans
from sentinel_mcp.core.card_numbers import card_spans
from sentinel_mcp.core.code_glued import glued_code_spans
from sentinel_mcp.core.code_dates import a_year, date_spans, in_a_date, set_apart
from sentinel_mcp.core.code_words import code_word_spans_near, fold_letters, holds_a_code_word
from sentinel_mcp.core.encoded_text import (
    base64_bytes,
    base64_scrubbed,
    hex_scrubbed,
    json_inside,
    percent_scrubbed,
)
from sentinel_mcp.core.embedded_json import json_objects
from sentinel_mcp.core.escaped_text import may_be_escaped, unescaped
from sentinel_mcp.core.iban_numbers import iban_spans
from sentinel_mcp.core.identifier_shapes import identifier_spans, inside_an_identifier
from sentinel_mcp.core.secret_names import PASSWORD_IN, secret_name
from sentinel_mcp.core.split_numbers import numbered_groups, shared_keys, spelled_number

# the patterns run on ``_folded`` text (ASCII digits, one character per character); the code may stand on the
# line after its word ("Your code:\n123456", as most SMS codes do), never further
_CODE = re.compile(
    r"(?i)\b(code|otp|pin|passcode|verification|one[- ]time|2fa|mfa|security)\b"
    r"([^0-9\n]{0,24}(?:\n[^0-9\n]{0,24})?)([0-9][0-9 -]{2,10}[0-9])(?![0-9])"
)
_CODE_BEFORE = re.compile(
    r"(?i)(?<![0-9])([0-9](?:[ -]?[0-9]){3,7})(?![0-9])(\s{0,3}(?:is|as)\s+(?:your|the)\b[^\n]{0,30}"
    r"\b(?:code|otp|pin|passcode))"
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+([A-Za-z0-9._~+/=-]{8,})")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")
# ``key=value``, ``key: value`` or ``"key": "value"`` anywhere in a text, the key in any script; the value is
# masked when the key names a secret (``_secret_key``): DB_PASSWORD=, PGPASSWORD=, {"password": ...},
# contraseña:
_PAIR = re.compile(
    r"""(?<![\w.])(["']?)([^\W\d_][\w.-]{0,63})\1(\s*[:=]\s*)"""
    r"""(?!\[(?:code|card|iban|redacted))("[^"\n]*"|'[^'\n]*'|[^\s"'&,;}\]]+)"""
)
# a URL's user:password@, or a user name alone (``https://<token>@host``: a token is often sent so)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{0,20}://(?:[^/\s:@?#]{1,128}:)?)([^/\s@?#]{1,256})(@)")
# HTTP's Basic credentials: base64 of "user:password" (the word "basic" before other words stays)
_BASIC = re.compile(r"(?i)\b(basic)\s+([A-Za-z0-9+/_-]{4,}={0,2})(?![\w+/=-])")
# secret words a glued name ends with (PGPASSWORD, MYSECRET, GHTOKEN): ``secret_name`` reads words apart
_GLUED_ENDS = ("password", "passwd", "passphrase", "passcode", "secret", "token", "apikey", "credential",
               "credentials")


def mask(value: Any) -> str:
    n = len(value) if isinstance(value, str) else len(str(value))
    return f"[redacted {n} chars]"


def _mask_ibans(text: str, folded: str) -> tuple[str, str]:
    """Every IBAN in the text (``iban_numbers.py``, read on its fold) as ``[iban ****3000]``, but for one
    inside a digest or id of a known shape."""
    spans = iban_spans(folded)
    ids = identifier_spans(folded) if spans else []
    spans = [span for span in spans if not (ids and inside_an_identifier(span, ids))]
    marks = ["[iban ****" + "".join(c for c in folded[a:b] if c.isalnum())[-4:] + "]" for a, b in spans]
    return _spliced(text, folded, spans, marks)


def _mask_cards(text: str) -> str:
    """Every card number in the text (however it is spaced: ``card_numbers.py``) as ``[card ****1234]``, but
    for digits inside a digest or id of a known shape (``identifier_shapes.py``)."""
    out, last = [], 0
    spans = card_spans(text)
    ids = identifier_spans(text) if spans else []
    for a, b in spans:
        if ids and inside_an_identifier((a, b), ids):
            continue
        digits = "".join(ch for ch in text[a:b] if ch.isdecimal())
        out += [text[last:a], f"[card ****{digits[-4:]}]"]
        last = b
    return "".join(out) + text[last:] if out else text


_DIGIT_TABLE = str.maketrans("", "", "0123456789")
_ANY_DIGITS = re.compile(r"\d+")
_CODE_WORDS = (
    "code",
    "otp",
    "pin",
    "passcode",
    "verification",
    "one-time",
    "one time",
    "2fa",
    "mfa",
    "security",
)
# a text is read for secret pairs only when one of these is in it (lower case, folded)
_PAIR_WORDS = (
    "pass", "pw", "secret", "token", "key", "pin", "otp", "cvv", "cvc", "credential", "auth", "mfa"
)


def _pair_words_in(low: str) -> bool:
    """Whether a text (folded, lower case) may hold a secret's ``key=value``: a secret's word or a password's
    of any language (``PASSWORD_WORDS``, read on the text's letters: "contraseña", "Пароль")."""
    if any(w in low for w in _PAIR_WORDS):
        return True
    return PASSWORD_IN.search(low if low.isascii() else fold_letters(low)) is not None


def _cf_joined(text: str, folded: str) -> str:
    """``folded`` with each invisible format character of ``text`` as ``_`` (its fold is a space): a key
    spelled ``pass\u200bword`` is read as ``pass_word``, one name, not the word after a space."""
    if text.isascii() or folded.count(" ") == text.count(" "):  # (no character of the text folded to a space)
        return folded
    return "".join("_" if f == " " and c != " " and unicodedata.category(c) == "Cf" else f
                   for c, f in zip(text, folded))


def _secret_key(key: str) -> bool:
    """Whether the key of a pair in a text names a secret: as an argument's name would (``secret_name``), or a
    glued name ending with a secret word (``PGPASSWORD``)."""
    if secret_name(key):
        return True
    glued = key.lower().replace("_", "").replace("-", "").replace(".", "")
    return glued.endswith(_GLUED_ENDS)


def _folded(text: str) -> str:
    """``text`` as the patterns read it, one character for each of its own (so a match's span is the same span
    of the text as written): a decimal digit of any script as its ASCII digit ("١٢٣٤" and "１２３４" are codes
    as much as "1234"), a character NFKC makes one character as that ("ＯＴＰ：", "𝐜𝐨𝐝𝐞", a no-break space),
    an invisible format character (a zero-width space, a word joiner) as a space. ASCII text is itself."""
    return text if text.isascii() else text.translate(_FOLD)


class _Fold(dict[int, str]):
    """``str.translate``'s table for ``_folded``, each character worked out once (at most ``_FOLD_KEPT`` of
    them kept: a text of every code point does not grow it without end)."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        if ch.isdecimal():
            out = chr(48 + unicodedata.decimal(ch))
        elif unicodedata.category(ch) == "Cf":
            out = " "
        else:
            nf = unicodedata.normalize("NFKC", ch)
            out = nf if len(nf) == 1 else ch
        if len(self) < _FOLD_KEPT:
            self[code] = out
        return out


_FOLD_KEPT = 20_000
_FOLD = _Fold()


def _masked(
    text: str, folded: str, pattern: re.Pattern[str], group: int, mark: str, key: int | None = None,
    unless: Callable[[re.Match[str]], object] | None = None,
) -> tuple[str, str]:
    """``text`` (and its fold) with ``group`` of each match of ``pattern`` in the fold put as ``mark`` (with
    ``key``: only where that group names a secret, ``_secret_key``; after another key the search goes on
    inside its value: ``https://x/?token=...`` is a pair "https" whose value holds the secret one)."""
    spans, pos = [], 0
    while (m := pattern.search(folded, pos)) is not None:
        if unless is not None and unless(m):  # (what only looks like one: a date)
            pos = m.end()
        elif key is None or _secret_key(m.group(key)):
            spans.append(m.span(group))
            pos = m.end()
        else:
            pos = m.start(group)
    return _spliced(text, folded, spans, mark)


def _spliced(
    text: str, folded: str, spans: list[tuple[int, int]], mark: str | list[str]
) -> tuple[str, str]:
    """``text`` and its fold with each span (left to right, apart) put as ``mark`` (or its own of ``mark``'s
    list)."""
    if not spans:
        return text, folded
    pieces, folds, last = [], [], 0
    for i, (a, b) in enumerate(spans):
        put = mark if isinstance(mark, str) else mark[i]
        pieces += [text[last:a], put]
        folds += [folded[last:a], put]
        last = b
    return "".join(pieces) + text[last:], "".join(folds) + folded[last:]


# a 4-8 digit run, its groups apart by a space, a dash or a dot (``device_tools/one_time_codes.py``'s),
# standing alone: digits inside a Latin word (a hash's hex "52fa2631c3084f", "sha256") are that word's
_SEP = r"(?:[ \u00a0\u2009\u202f]|[ ]?[-\u2010\u2011\u2012\u2013\u2014.][ ]?)"
_RUN = re.compile(rf"(?<![0-9A-Za-z])[0-9](?:{_SEP}?[0-9]){{3,7}}(?![0-9A-Za-z])")
_WORD_REACH = 24  # characters between a code word and its code, either side (as ``_CODE``'s)

def _masked_near_words(text: str, folded: str) -> tuple[str, str]:
    """Each digit run within ``_WORD_REACH`` of a code word of any language (``code_words.py``) as
    ``[code]``, but for a date or a year set apart from the word (``code_dates.py``)."""
    letters = fold_letters(folded)
    if not holds_a_code_word(letters):
        return text, folded
    # (three groups or more apart by dots are a version, a date or an address: "VS Code 1.95.3", "10.0.0.1")
    dates, spans = date_spans(folded), []
    for m in _RUN.finditer(folded):
        if m.group().count(".") >= 2 or (dates and in_a_date(m.span(), dates)):
            continue
        near = code_word_spans_near(letters, m.start(), m.end(), _WORD_REACH)
        if near and not (a_year(m.group()) and all(
                set_apart(letters[b:m.start()] if b <= m.start() else letters[m.end():a]) for a, b in near)):
            spans.append(m.span())
    glued = glued_code_spans(folded, letters)
    if glued:  # (a run after a word of another script is found both ways: once)
        merged = sorted(spans + glued)
        spans = [sp for i, sp in enumerate(merged) if not i or sp[0] >= merged[i - 1][1]]
    if not spans:
        return text, folded
    return _spliced(text, folded, spans, "[code]")


def _masked_card_codes(text: str, folded: str) -> tuple[str, str]:
    """A card's security code after its label (``card_codes.py``: "CVN: 123", "Kartenprüfnummer 123") as
    ``[code]``."""
    cased = folded.lower()
    spans = card_code_spans(cased) if len(cased) == len(folded) else []  # ("İ" lowers to two)
    return _spliced(text, folded, spans, "[code]")


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with known secret values and recognisable secrets (cards, codes, tokens) masked, whatever
    script their digits and words are written in (``_folded``). Each pattern runs only when the words or
    digits it needs are there (cheap substring tests keep long texts fast)."""
    known = _longest_first(secrets) if secrets else []
    if known:
        text = _known_replaced(text, known)
    if may_be_escaped(text):  # (an escape hid a secret: the record keeps the text unescaped, masked)
        plain = unescaped(text)
        if plain != text:
            scrubbed = _patterns_scrubbed(plain)
            if scrubbed != plain:
                return scrubbed
    return _patterns_scrubbed(text)


def _patterns_scrubbed(text: str) -> str:
    """``scrub_text``'s reading of a text as it is written (its escapes, if any, left as they are)."""
    if "%" in text or len(text) >= 16:  # (shorter, no encoded piece can hide a secret: no call)
        text = _decodings_scrubbed(text)
    digits = len(text) - len(text.translate(_DIGIT_TABLE))
    if not text.isascii():  # (any script's digits: ``\d`` is ``str.isdecimal``)
        digits = sum(map(len, _ANY_DIGITS.findall(text)))
    folded = _folded(text)
    if digits >= 4:  # (an IBAN's first, before its digits are read for a card's)
        text, folded = _mask_ibans(text, folded)
    if digits >= 13:
        carded = _mask_cards(text)
        text, folded = (text, folded) if carded == text else (carded, _folded(carded))
    if digits >= 3:
        text, folded = _masked_card_codes(text, folded)
    low = folded.lower()
    if digits >= 4 and any(w in low for w in _CODE_WORDS):
        dates = date_spans(folded)
        text, folded = _masked(text, folded, _CODE, 3, "[code]", unless=lambda m: (
            in_a_date(m.span(3), dates) or (a_year(m.group(3)) and set_apart(m.group(2)))))
        text, folded = _masked(text, folded, _CODE_BEFORE, 1, "[code]")
    if digits >= 4:  # the code words of every language the device knows (``code_words.py``)
        text, folded = _masked_near_words(text, folded)
    if "bearer" in low:
        text, folded = _masked(text, folded, _BEARER, 2, "[redacted]")
    if "basic" in low:
        text, folded = _masked(text, folded, _BASIC, 2, "[redacted]",
                               unless=lambda m: _no_user_password(m.group(2)))
    if "eyj" in low:
        text, folded = _masked(text, folded, _JWT, 0, "[redacted token]")
    if (":" in folded or "=" in folded) and _pair_words_in(low):
        text, folded = _masked(text, _cf_joined(text, folded), _PAIR, 4, "[redacted]", key=2)
    if "://" in folded and "@" in folded:
        text, folded = _masked(text, folded, _USERINFO, 2, "[redacted]")
    return text


def _no_user_password(token: str) -> bool:
    """Whether a word after "basic" is no base64 of "user:password" (a plain word: "basic information")."""
    return b":" not in (base64_bytes(token) or b"")  # (a password in Latin-1 is no UTF-8: bytes are read)


def _decodings_scrubbed(text: str) -> str:
    """``text`` with what its encoded pieces hide masked (``encoded_text.py``): a JSON document in it read
    as arguments are (its keys name secrets too), percent-encoded and base64 pieces read decoded."""
    inner = json_inside(text) if text[:1] in "{[ \n" else None
    if inner is not None:
        redacted = redact_record({"arguments": inner})["arguments"]
        if redacted != inner:
            text = json.dumps(redacted, ensure_ascii=False)
    elif "{" in text:  # objects written inside the text ("failed: {...}")
        spans, marks = [], []
        for a, b, value in json_objects(text):
            redacted = redact_record({"arguments": value})["arguments"]
            if redacted != value:
                spans.append((a, b))
                marks.append(json.dumps(redacted, ensure_ascii=False))
        text = _spliced(text, text, spans, marks)[0]
    return hex_scrubbed(base64_scrubbed(percent_scrubbed(text, scrub_text), scrub_text), scrub_text)


def redact_value(value: Any, sensitive: set[str], secrets: set[str], name: str = "") -> Any:
    """A copy of a JSON-like value with secret fields masked (their values collected in ``secrets``) and
    recognisable secrets masked in every string."""
    if name and (name in sensitive or secret_name(name)) and value not in (None, "", [], {}):
        for s in _strings(value):
            secrets.add(s)
        return mask(value) if not isinstance(value, (dict, list)) else "[redacted]"
    if isinstance(value, dict):
        names = _key_names(value)
        out = {names[k]: redact_value(v, sensitive, secrets, str(k)) for k, v in value.items()}
        marks = _spelled_over(list(value.values()), numbers=False) if len(value) > 1 else None
        if marks is not None:
            return dict(zip(out, marks))
        for keys in numbered_groups(value) if len(value) > 1 else ():  # {"card_1": "4111", "card_2": ...}
            marks = _spelled_over([value[k] for k in keys], numbers=True)
            if marks is not None:
                out.update(zip((names[k] for k in keys), marks))
        return out
    if isinstance(value, list):
        marks = _spelled_over(value, numbers=True) if len(value) > 1 else None
        if marks is not None:
            return marks
        items = [redact_value(v, sensitive, secrets, name) for v in value]
        for key in shared_keys(value):  # [{"part": "4111"}, {"part": "1111"}, ...]
            for item, put in zip(items, _spelled_over([v[key] for v in value], numbers=True) or ()):
                item[_key_scrubbed(key)] = put
        return items
    if isinstance(value, str):
        inner = json_inside(value) if value[:1] in "{[ \n" else None
        if inner is not None:  # a JSON document sent as a string: read as arguments (its secrets known)
            redacted = redact_value(inner, sensitive, secrets)
            return value if redacted == inner else json.dumps(redacted, ensure_ascii=False)
        return scrub_text(value)
    if _card_sized(value) and card_spans(str(value)):
        return f"[card ****{str(value)[-4:]}]"  # a card number sent as a JSON number
    return value


def _key_names(value: dict[Any, Any]) -> dict[Any, Any]:
    """Each key of an object as a record keeps it (``_key_scrubbed``), no two alike: a key masked as another
    is written is numbered ("[card ****1111] (2)"), so no value is lost by two keys masking to one."""
    names = {k: _key_scrubbed(k) for k in value}
    if len(set(names.values())) == len(names):
        return names
    taken = {k for k, n in names.items() if n == k}
    for k, n in names.items():
        if n != k:
            put, i = n, 1
            while put in taken:
                i += 1
                put = f"{n} ({i})"
            taken.add(put)
            names[k] = put
    return names


def _key_scrubbed(key: Any) -> Any:
    """An object's key as a record may keep it: a name of letters as it is (the usual key, read at no cost),
    any other read as a text is (a key can carry a card number or ``password=...`` as well as a value)."""
    if not isinstance(key, str) or (len(key) <= 64 and key.isascii() and key.replace("_", "").isalpha()):
        return key
    return scrub_text(key)


def _card_sized(value: Any) -> bool:
    """Whether ``value`` is an integer a card number could be written as (13-19 digits: an integer of
    thousands of digits is never written out here)."""
    return isinstance(value, int) and not isinstance(value, bool) and 10**12 <= value < 10**19


def _spelled_over(parts: list[Any], numbers: bool) -> list[str] | None:
    """Marks for ``parts`` that spell a card number or IBAN together (``split_numbers.py``): each ``[card]``
    (``[iban]``), the last ``[card ****1111]``; or None."""
    found = spelled_number(parts, numbers)
    if found is None:
        return None
    kind, tail = found
    return [f"[{kind}]"] * (len(parts) - 1) + [f"[{kind} ****{tail}]"]


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif value is not None and not isinstance(value, bool):
        yield str(value)


def _scrub_any(value: Any, secrets: set[str]) -> Any:
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, (dict, list)):
        # a proof tree holds thousands of strings: scrub its JSON text in one pass, parse it back
        text = json.dumps(value, ensure_ascii=False, default=str)
        forms = secrets | {json.dumps(s, ensure_ascii=False)[1:-1] for s in secrets}
        scrubbed = scrub_text(text, forms)
        if scrubbed == text:
            return value
        try:
            return json.loads(scrubbed)
        except ValueError:  # a mask that cut through the JSON syntax: read it as arguments are instead
            return redact_value(_known_masked(value, _longest_first(secrets)), set(), set())
    return value


def _longest_first(secrets: Iterable[str]) -> list[str]:
    """The known secret values worth masking, longest first (one inside another is masked whole); of 3
    characters or more: shorter values would mask unrelated characters everywhere."""
    return sorted({s for s in secrets if len(s) >= 3}, key=len, reverse=True)


def _known_replaced(text: str, ordered: list[str]) -> str:
    """``text`` with each of ``ordered`` (``_longest_first``) masked, or its unescaped form with them masked
    when only that holds one ("hunter&#50;")."""
    text = _each_replaced(text, ordered)
    if ordered and may_be_escaped(text) and (plain := unescaped(text)) != text:
        known = _each_replaced(plain, ordered)
        return known if known != plain else text
    return text


def _each_replaced(text: str, ordered: list[str]) -> str:
    for s in ordered:
        if s in text:
            text = text.replace(s, mask(s))
    return text


def _known_masked(value: Any, secrets: list[str]) -> Any:
    """``value`` with each known secret (``_longest_first``) masked in its strings."""
    if isinstance(value, str):
        return _known_replaced(value, secrets)
    if isinstance(value, dict):
        return {k: _known_masked(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_known_masked(v, secrets) for v in value]
    return value


def redact_arguments(arguments: Any, sensitive: Iterable[str] = ()) -> tuple[Any, set[str]]:
    """A call's arguments as they may be stored (a copy), and the secret values found in them, which the
    record's other fields are scrubbed of (``scrub_with``)."""
    secrets: set[str] = set()
    out = redact_value(arguments, set(sensitive), secrets)
    # a secret argument's value repeated in another ({"password": p, "confirm": p})
    known = _longest_first(secrets)
    if known:
        out = _known_masked(out, known)
    return out, secrets


def scrub_with(value: Any, secrets: set[str]) -> Any:
    """A record's reason, proof or error (text or JSON-like) with ``secrets`` and recognisable secrets
    masked; ``value`` itself when nothing was."""
    return None if value is None else _scrub_any(value, secrets)


def redact_record(record: dict[str, Any], sensitive: Iterable[str] = ()) -> dict[str, Any]:
    """An audit record (``arguments``, ``reason``, ``proof``, ``error`` and any other fields) as it may be
    stored: a new dict, the input untouched."""
    secrets: set[str] = set()
    out = dict(record)
    if out.get("arguments") is not None:
        out["arguments"], secrets = redact_arguments(out["arguments"], sensitive)
    for key in ("reason", "proof", "error"):
        if out.get(key) is not None:
            out[key] = _scrub_any(out[key], secrets)
    return out
