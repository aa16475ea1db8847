"""Text as UTF-8 costs it: whether UTF-8 can write it, its size in bytes, and its longest prefix within a
number of bytes.

A ``\\ud800`` escape in JSON gives half a surrogate pair, a str Python holds that no encoder on the way to a
client (or to disk) can write. Every size bound on text counts ``utf8_size``: an astral character is one
character and four bytes, and a bound counted in characters held, sent or stored four times what it said. A
lone surrogate counts as the three bytes ``surrogatepass`` writes (it is refused or replaced before it is
written; its count must still be bounded)."""

from __future__ import annotations

import json
from typing import Any


def utf8_writable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf8_size(text: str) -> int:
    """``text``'s UTF-8 bytes (ASCII, the common case, without encoding it)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def utf8_prefix(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` within ``max_bytes`` UTF-8 bytes (never half a character)."""
    if len(text) <= max_bytes // 4 or utf8_size(text) <= max_bytes:
        return text
    if text.isascii():
        return text[: max(0, max_bytes)]
    cut = text.encode("utf-8", "surrogatepass")[: max(0, max_bytes)]
    for end in range(len(cut), max(-1, len(cut) - 4), -1):  # a character is at most 4 bytes
        try:
            return cut[:end].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            continue
    return ""


def json_utf8_size(value: Any) -> int:
    """The UTF-8 bytes of ``value`` as compact JSON with its characters unescaped (what it costs on a wire
    or on disk; ``json.dumps``'s default escapes an astral character as twelve ASCII characters)."""
    return utf8_size(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str))
