"""A stored text a console form names for the server to find again (a consent's kind and purpose, a fact), as
the browser will send it back.

A browser does not send a field's value as the page wrote it: the HTML parser turns a NUL into U+FFFD and a
CR (or CRLF) into LF, and the form's encoding turns each LF into CRLF. A consent whose purpose a client stated
as "trip<LF>x" came back from its Revoke button as "trip<CR><LF>x": no such consent, nothing revoked, and
the person could not end it from the console. A text the browser keeps as it is goes as itself; any other
goes as ``#`` and a digest of it, and the handler finds the stored text whose digest that is (a text that
starts with ``#`` always goes by its digest, so the two never meet).

    <input type="hidden" name="purpose" value="{{ c.purpose|sent_value }}">
    purpose = stored_text(form_value, [c.purpose for c in listed])   # the stored text, or what was sent
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable

DIGEST = "#"


def kept_by_browser(text: str) -> bool:
    """Whether a browser sends ``text`` back as the page wrote it (no control character, no lone
    surrogate, not the digest's mark)."""
    return not text.startswith(DIGEST) and not any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


def sent_value(text: str) -> str:
    """What a form field holding ``text`` sends: the text, or ``#`` and its digest."""
    if kept_by_browser(text):
        return text
    return DIGEST + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def stored_text(sent: str, stored: Iterable[str]) -> str:
    """The one of ``stored`` that a form sent as ``sent``; ``sent`` itself when none is (a text the
    handler then finds nothing under, as before)."""
    if not sent.startswith(DIGEST):
        return sent
    return next((text for text in stored if sent_value(text) == sent), sent)
