"""A URL as it may be printed: without the credentials it may carry.

Why: a configured URL often holds a secret (``https://user:password@host``, a hosted MCP server's
``?api_key=...``), and what prints it (an error, ``config show``) reaches a terminal, a host's log or a bug
report. Read by pattern, not by ``urlsplit``: a URL that does not parse (a bad port) is printed too.
"""

from __future__ import annotations

import re

_USERINFO = re.compile(r"//[^/?#]*@")
_AFTER_PATH = re.compile(r"[?#].*", re.S)
# scheme://[userinfo@]host-and-path[?query][#fragment]; the last "@" before the path ends the user info
_URL = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://)(?:(?P<user>[^/?#]*)@)?(?P<place>[^?#]*)"
                  r"(?P<query>\?[^#]*)?(?P<fragment>#.*)?", re.S)
MASK = "***"
_VARIABLE = re.compile(r"\$\{[^{}]*\}")  # ${VAR} as written (config show's as-written strings): no secret


def without_credentials(url: str) -> str:
    """``url`` as an error quotes it: its user name and password, query and fragment left out."""
    return _AFTER_PATH.sub("", _USERINFO.sub("//", url, count=1))


def masked_credentials(text: str) -> str:
    """``text``, when it is a URL, with its password (or a user name alone, which may be a token) and each
    query value shown as ``***`` (one written as a whole ``${VAR}`` stays: it names where the secret comes
    from); any other text as it is."""
    m = _URL.fullmatch(text)
    if m is None or (m["user"] is None and m["query"] is None):
        return text
    user = m["user"]
    if user is not None:
        name, colon, password = user.partition(":")
        user = (f"{name}:{_shown(password)}@" if colon else f"{_shown(name)}@")
    query = m["query"]
    if query is not None and len(query) > 1:
        query = "?" + "&".join(_masked_pair(p) for p in query[1:].split("&"))
    return f"{m['head']}{user or ''}{m['place']}{query or ''}{m['fragment'] or ''}"


def _masked_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    return f"{name}={_shown(value)}" if equals else _shown(pair)


def _shown(secret: str) -> str:
    return secret if not secret or _VARIABLE.fullmatch(secret) else MASK
