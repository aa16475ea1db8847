"""Any Python string as text SQLite keeps, and back, exactly.

JSON allows a lone UTF-16 surrogate (``"\\ud800"``) and Python keeps it in a ``str``, but SQLite's UTF-8
cannot
hold it: the sqlite3 module raises ``UnicodeEncodeError``. A session id or an argument from a client may carry
one, and the fact store must neither raise nor merge two different strings into one (a session id is a key).
So such a character is written as an escape character followed by a code point of Supplementary Private Use
Area-B (U+10F800 + offset, the stand-in the engine uses too), and the escape character itself is doubled;
reading undoes both. Text without those characters (nearly all) is passed through unchanged.

Where a lone surrogate is refused instead (text kept as given, such as a memory), ``lone_surrogate`` finds it:
``stored(t) != t`` is no such test, since the escape character (a valid code point) changes too.
"""

from __future__ import annotations

import re

_ESC = "\U0010f7ff"
_BASE = 0x10F800 - 0xD800
_NEEDS = re.compile("[\ud800-\udfff\U0010f7ff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED = re.compile("\U0010f7ff([\U0010f7ff-\U0010ffff])")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _ESC + (_ESC if c == _ESC else chr(ord(c) + _BASE))


def _unescape(m: re.Match[str]) -> str:
    c = m.group(1)
    return _ESC if c == _ESC else chr(ord(c) - _BASE)


def stored(text: str) -> str:
    """Text SQLite can keep (valid UTF-8) that ``restored`` turns back into ``text``."""
    if text.isascii():  # nearly all text: nothing to escape (one C pass, no regex)
        return text
    return _NEEDS.sub(_escape, text) if _NEEDS.search(text) else text


def stored_opt(text: str | None) -> str | None:
    return None if text is None else stored(text)


def lone_surrogate(text: str) -> tuple[int, str] | None:
    """The first lone surrogate in ``text`` (its index and itself), or None when ``text`` is valid Unicode."""
    m = _SURROGATE.search(text)
    return None if m is None else (m.start(), m.group())


def surrogates_replaced(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, the replacement character (for a search query).
    """
    return _SURROGATE.sub("\ufffd", text)


def restored(text: str) -> str:
    return _ESCAPED.sub(_unescape, text) if _ESC in text else text


def restored_opt(text: str | None) -> str | None:
    return None if text is None else restored(text)
