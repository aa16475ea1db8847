"""The HTTP Basic credentials a URL's user info gives (``https://user:password@host/mcp``), read the one way
both of Sentinel's HTTP clients send them.

Why: the MCP SDK's client (httpx2) sends a URL's user name and password as ``Authorization: Basic``; the lean
client (``gateway/lean_http.py``) dropped them, so an upstream configured that way got no credentials on a
``tools/call``. Read as httpx2 reads them: the user info is what precedes the authority's last ``@``, split at
its first ``:``, each half percent-decoded as UTF-8; nothing is sent when both halves are empty.

Refused when the config loads (``credentials_problem``), each naming the part, never its text: a half whose
percent-encoding is no UTF-8 (httpx2 sent U+FFFD in its place, not what was written), a half holding a control
character once decoded (``%0D%0A``: a server or proxy may read it as a line break), a user name holding ``:``
once decoded (RFC 7617: the server splits at the first one, so the password changes), and an
``Authorization`` header configured beside them (httpx2 sent the URL's, the lean client the header's: two
credentials, one request each way).
"""

from __future__ import annotations

import base64
import re
from urllib.parse import unquote, urlsplit

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1: no credential holds one


def _halves(url: str) -> tuple[str, str] | None:
    """The user name and password as written (not decoded), or None when the URL has no user info."""
    netloc = urlsplit(url).netloc
    if "@" not in netloc:
        return None
    user, _, password = netloc.rpartition("@")[0].partition(":")
    return user, password


def _decoded(half: str) -> str:
    """``half`` percent-decoded as UTF-8 (``UnicodeDecodeError`` when a decoded byte run is no UTF-8)."""
    return unquote(half, errors="strict")


def credentials_problem(url: str, headers: dict[str, str] | None = None) -> str | None:
    """Why the user info of ``url`` (with ``headers`` configured beside it) cannot be sent as Basic auth
    as written, or None (no user info is no problem)."""
    halves = _halves(url)
    if halves is None or halves == ("", ""):
        return None
    for what, half in zip(("user name", "password"), halves):
        try:
            text = _decoded(half)
        except UnicodeDecodeError:
            return (f"the {what} in the URL is percent-encoded bytes that are no UTF-8 text: it would not be "
                    "sent as written")
        bad = _CONTROL.search(text)
        if bad is not None:
            return (f"the {what} in the URL holds a control character (U+{ord(bad.group()):04X}) once "
                    "percent-decoded: it is not sent")
        if what == "user name" and ":" in text:
            return ("the user name in the URL holds ':' once percent-decoded: Basic auth splits at the first "
                    "':', so the server would read another user name and password")
    if any(name.lower() == "authorization" for name in headers or {}):
        return ("the URL carries a user name or password and an 'Authorization' header is configured too: "
                "give the credentials one way, in the URL or in the header, not both")
    return None


def basic_authorization(url: str) -> str | None:
    """The ``Authorization`` value the user info of ``url`` gives (``Basic`` and base64 of
    ``user:password``), or None when it has none; a URL ``credentials_problem`` refuses raises
    ``UnicodeDecodeError`` or gives the value httpx2 would (check it first)."""
    halves = _halves(url)
    if halves is None or halves == ("", ""):
        return None
    user, password = (_decoded(h) for h in halves)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return f"Basic {token}"
