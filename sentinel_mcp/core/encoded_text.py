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
# (MIME and PEM wrap base64 in lines of 76 or 64: a piece goes on over line breaks, read joined)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}(?:\r?\n[ \t]*[A-Za-z0-9+/_-]{2,})*={0,2}")
_LINE_BREAK = re.compile(r"(\r?\n[ \t]*)")  # (a line's indent too: PEM in YAML)
# bytes written as hex, together or a space or colon apart ("34313131...", "0x3431...", "34 31 31 31")
_HEX = re.compile(r"(?:(?<=0[xX])|(?<![0-9A-Za-z]))[0-9A-Fa-f]{2}(?:[ :]?[0-9A-Fa-f]{2}){7,}(?![0-9A-Za-z])")
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
    if _hides_a_secret(base64_text(_LINE_BREAK.sub("", piece)), scrub):
        return f"[redacted base64 {len(piece)} chars]"
    if "\n" in piece:  # (lines that are no one piece joined: each line read as its own)
        return "".join(_base64_piece(part, scrub) if len(part) >= 16 and part[0] not in "\r\n" else part
                       for part in _LINE_BREAK.split(piece))
    return piece


def base64_text(piece: str) -> str | None:
    """What a base64 piece decodes to as UTF-8 text, or None (no base64, or bytes that are no UTF-8 text: a
    digest, an id)."""
    raw = base64_bytes(piece)
    try:
        return None if raw is None else raw.decode("utf-8")
    except ValueError:
        return None


def base64_bytes(piece: str) -> bytes | None:
    """What a base64 piece (standard or URL alphabet, padded or not) decodes to, or None."""
    body = piece.rstrip("=").rstrip("\r").replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _hides_a_secret(decoded: str | None, scrub: Callable[[str], str]) -> bool:
    """Whether a piece's decoding is text (no control characters) in which ``scrub`` masks something."""
    return decoded is not None and _TEXT.fullmatch(decoded) is not None and scrub(decoded) != decoded


def hex_scrubbed(text: str, scrub: Callable[[str], str]) -> str:
    """``text`` with each run of hex bytes whose decoding is text holding a secret put as
    ``[redacted hex N chars]`` (a digest's bytes are no UTF-8 text: it stays)."""
    if len(text) < 16:
        return text
    return _HEX.sub(lambda m: _hex_piece(m.group(), scrub), text)


def _hex_piece(piece: str, scrub: Callable[[str], str]) -> str:
    try:
        decoded: str | None = bytes.fromhex(piece.replace(":", " ")).decode("utf-8")
    except ValueError:
        decoded = None
    return f"[redacted hex {len(piece)} chars]" if _hides_a_secret(decoded, scrub) else piece


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
