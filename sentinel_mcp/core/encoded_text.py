"""A secret written in an encoding the redactor's patterns do not read: percent-encoded in a URL
(``?q=password%3Dhunter2``, ``4111%201111%20...``), base64 (``?d=eyJwYXNzd29yZCI6...``, a card's digits in
base64url), or a JSON document written as a string inside another (``"{\\"password\\": \\"...\\"}"``).

Each is decoded and the decoded text read by the redactor (``scrub``): where it finds a secret, the encoded
piece is put as its scrubbed decoding (percent-encoding: the record stays readable) or as a mark (base64:
its decoding is no text a person reads); where it finds none the piece stays as it was written. The
decodings shrink (a piece's decoding is shorter than it), so reading a decoding again for a piece encoded
twice ends."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

# a piece holding a %XX (up to the next space), and a run of base64's letters long enough to hide a secret
_PERCENT = re.compile(r"[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*)+")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_TEXT = re.compile(r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*")  # what a decoding holds to be read as text


def percent_scrubbed(text: str, scrub: Callable[[str], str]) -> str:
    """``text`` with each percent-encoded piece that decodes to a secret put as its scrubbed decoding."""
    if "%" not in text:
        return text
    return _PERCENT.sub(lambda m: _decoded_piece(m.group(), scrub), text)


def _decoded_piece(piece: str, scrub: Callable[[str], str]) -> str:
    decoded = piece
    for _ in range(3):  # (encoded twice or three times: %253D)
        once = unquote(decoded)
        if once == decoded:
            break
        decoded = once
    if decoded == piece:
        return piece
    scrubbed = scrub(decoded)
    return piece if scrubbed == decoded else scrubbed


def base64_scrubbed(text: str, scrub: Callable[[str], str]) -> str:
    """``text`` with each base64 piece (standard or URL alphabet) whose decoding is text holding a secret
    put as ``[redacted base64 N chars]``."""
    if len(text) < 16:
        return text
    return _BASE64.sub(lambda m: _base64_piece(m.group(), scrub), text)


def _base64_piece(piece: str, scrub: Callable[[str], str]) -> str:
    body = piece.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):  # (not base64, or bytes that are no UTF-8 text: a digest, an id)
        return piece
    if _TEXT.fullmatch(decoded) is None or scrub(decoded) == decoded:
        return piece
    return f"[redacted base64 {len(piece)} chars]"


def json_inside(text: str) -> Any:
    """The object or array ``text`` is the JSON of (a document sent as a string), or None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[" or stripped[-1] not in "}]":
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


_OBJECT_START = re.compile(r'\{\s*"|\[\s*[\[{"\d-]')  # an object with a key, an array of values
_DECODER = json.JSONDecoder()
MAX_TRIES = 16  # objects looked for in one text: each try reads up to the text's end, so few keep it linear


def json_objects(text: str) -> list[tuple[int, int, Any]]:
    """(start, end, value) of the JSON objects and arrays written inside a text ("failed: {\"card_1\": ..."),
    left to right, apart; at most ``MAX_TRIES`` places an object could start are tried."""
    out: list[tuple[int, int, Any]] = []
    at, tries = 0, 0
    while tries < MAX_TRIES and (m := _OBJECT_START.search(text, at)) is not None:
        tries += 1
        try:
            value, end = _DECODER.raw_decode(text, m.start())
        except (ValueError, RecursionError):
            at = m.end()
            continue
        out.append((m.start(), end, value))
        at = end
    return out
