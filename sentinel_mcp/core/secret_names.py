"""Which argument names say their value is a secret, and which arguments a tool declares secret.

An argument whose name says secret (password, pin, token, api key, secret, cvv, one-time code, a password's
word in any language ``code_words.PASSWORD_WORDS`` lists, a card's security code by any of its labels), or
that a tool declares sensitive (``_meta["sentinel/sensitive"]``, ``writeOnly``, ``format: password``), is
kept in a record by its length alone (``redactor.py``); a person approving a call never reads it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from sentinel_mcp.core.card_codes import names_a_card_code
from sentinel_mcp.core.code_words import PASSWORD_WORDS, fold_letters
from sentinel_mcp.core.escaped_text import may_be_escaped, unescaped

SENSITIVE_META = "sentinel/sensitive"
_NAME_WORDS = re.compile(r"[a-z]+|[0-9]+")
# words that make an argument secret wherever they appear in its name (password, new_password, apiKey, ...)
_SECRET_WORDS = {
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "credential",
    "credentials",
    "authorization",
    "cvv",
    "cvc",
    "cvv2",
    "otp",
    "pin",
    "passcode",
    "totp",
    "mfa",
    "pw",
}
# two-word names (api_key, card_number, verification_code, one_time_code, security_code, private_key)
_SECRET_PAIRS = {
    ("api", "key"),
    ("card", "number"),
    ("verification", "code"),
    ("security", "code"),
    ("one", "time"),
    ("auth", "code"),
    ("private", "key"),
    ("access", "key"),
    ("session", "key"),
    ("sms", "code"),
    ("login", "code"),
    ("card", "pan"),
}


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)  # camelCase -> camel Case
    return _NAME_WORDS.findall(spaced.lower())


def secret_name(name: str) -> bool:
    """Whether an argument's name says it holds a secret."""
    # every audit row asks this of every argument name (two rows a call): short names are remembered, long
    # ones (a caller's choice) are not, so the cache stays small whatever callers send
    return _secret_name_known(name) if len(name) <= _CACHED_NAME_CHARS else _secret_name(name)


_CACHED_NAME_CHARS = 64


@functools.lru_cache(maxsize=4096)
def _secret_name_known(name: str) -> bool:
    return _secret_name(name)


def _secret_name(name: str) -> bool:
    # (a name is read as written and with its escapes undone: "pass\\u0077ord", "pass&#119;ord")
    return _says_secret(name) or (may_be_escaped(name) and _says_secret(unescaped(name)))


def _says_secret(name: str) -> bool:
    if names_a_card_code(name):  # "cvn", "Kartenprüfnummer" (``card_codes.py``)
        return True
    if PASSWORD_IN.search(_glued_letters(name)):  # "Passwort", "mot_de_passe", "contraseña", "пароль"
        return True
    words = _words(name)
    if any(w in _SECRET_WORDS for w in words) or "".join(words) in _SECRET_WORDS:
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(words, words[1:]))


# a password's word of any language (``code_words.PASSWORD_WORDS``) in a name read as its letters alone
PASSWORD_IN = re.compile("|".join(re.escape(fold_letters(w).replace(" ", "")) for w in PASSWORD_WORDS))


def _glued_letters(name: str) -> str:
    """``name``'s letters folded (``code_words.fold_letters``: "ＰＡＳＳＷＯＲＤ", "Contraseña") with what
    parts its words taken out ("mot_de_passe", "pass\u200bword", "pass-word")."""
    return "".join(c for c in fold_letters(name) if c.isalpha())


def sensitive_fields_of(tool: Any) -> set[str]:
    """Argument names a tool declares sensitive: its ``_meta["sentinel/sensitive"]`` list, and input schema
    properties marked ``writeOnly`` or ``format: password``."""
    out: set[str] = set()
    meta = getattr(tool, "meta", None) or {}
    declared = meta.get(SENSITIVE_META) if isinstance(meta, dict) else None
    if isinstance(declared, list):
        out.update(str(d) for d in declared)
    props = (getattr(tool, "input_schema", None) or {}).get("properties") or {}
    if isinstance(props, dict):
        for name, spec in props.items():
            if isinstance(spec, dict) and (spec.get("writeOnly") is True or spec.get("format") == "password"):
                out.add(name)
    return out


def secret_arguments_of(tool: Any) -> set[str]:
    """The arguments a tool itself says are secrets, whose values a person approving its call never reads:
    those it declares sensitive (``sensitive_fields_of``) and the properties its schema lists under a
    secret's name (``password``, ``api_key``). A client chooses neither."""
    if tool is None:
        return set()
    declared = (getattr(tool, "input_schema", None) or {}).get("properties")
    names = set(declared) if isinstance(declared, dict) else set()
    return sensitive_fields_of(tool) | {n for n in names if isinstance(n, str) and secret_name(n)}
