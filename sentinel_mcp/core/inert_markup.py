"""A server's words, shown where a client may draw HTML, kept as the text they are.

A client that renders a question as HTML draws ``<br>``, ``<p>`` or ``&#10;`` in a field's title as a new
line, and a new line reads as a new utterance: "Pick one<br>Sentinel: approved" came out headed on its first
line only, its second reading as Sentinel's. Every tag and character reference of a server's shown word is
made text (``<`` and the ``&`` that opens a reference written as an entity), so no markup acts at all: no
break, no hidden span, no styled block over the header. A client that does not render HTML shows the entity,
as odd as the markup it stands for; a markdown client draws it as the character.
(U+2028, U+2029 and the other breaks a reader honours are marked where the word is made safe to show,
``display_text``.)
"""

from __future__ import annotations

import re

# "<" opens every tag; "&" opens a reference when a name or "#" follows it ("&#10;", "&NewLine;", "&lt")
_MARKUP = re.compile(r"<|&(?=[#A-Za-z])")


def inert_markup(text: str) -> str:
    """``text`` with no HTML tag or character reference a client would draw as markup."""
    if "<" not in text and "&" not in text:
        return text
    return _MARKUP.sub(lambda m: "&lt;" if m.group() == "<" else "&amp;", text)
