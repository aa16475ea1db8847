"""A value someone supplied, as one quoted value in a sentence of Sentinel's: the Python twin of
``readable_terms.pl`` (``readable/2`` of a text), for the texts Sentinel makes itself and hands a rulebase
to show as they are (``text(T)``), such as an unverified peer's description.

A text of at most 64 characters made of ``[A-Za-z0-9_.#@+-]`` (an identifier, a code, a date, an address)
reads bare: it cannot carry a sentence. Any other reads ``“…”``, with what could close the quote (``”`` and
every double quotation mark drawn like it, and the backslash) escaped by a backslash, and line feeds and
carriage returns as ``\\n`` ``\\r``: nothing in it passes for a sentence or a line of the text around it.
Hidden characters are left as they are, for ``display_text`` to mark where the text is shown (one marking).
"""

from __future__ import annotations

import re

__all__ = ["CLOSING_LIKE", "readable_text"]

_BARE = re.compile(r"[A-Za-z0-9_.#@+\-]{1,64}")  # as readable_terms.pl: bare only when short
# the backslash, " « » ʺ ˮ “ ” „ ‟ ″ ‶ 〃 〝 〞 〟 ＂ (readable_terms.pl's closing_like/1: the same list)
CLOSING_LIKE = frozenset("\\\"\u00ab\u00bb\u02ba\u02ee\u201c\u201d\u201e\u201f\u2033\u2036\u3003\u301d\u301e"
                         "\u301f\uff02")
_ESCAPE = {"\n": "\\n", "\r": "\\r"} | {c: "\\" + c for c in CLOSING_LIKE}


def readable_text(value: str, limit: int | None = None) -> str:
    """``value`` bare or quoted; ``limit``: at most that many of its characters, the rest said, outside
    the quote (a cut inside it could leave a backslash that escapes the closing mark)."""
    cut = 0
    if limit is not None and len(value) > limit:
        value, cut = value[:limit], len(value) - limit
    if _BARE.fullmatch(value):
        text = value
    else:
        text = "\u201c" + "".join(_ESCAPE.get(c, c) for c in value) + "\u201d"
    return f"{text}… ({cut} more characters not shown)" if cut else text
