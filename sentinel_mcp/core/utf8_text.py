"""Whether a text is Unicode that UTF-8 can write: a ``\\ud800`` escape in JSON gives half a surrogate pair, a
str Python holds that no encoder on the way to a client (or to disk) can write."""

from __future__ import annotations


def utf8_writable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
