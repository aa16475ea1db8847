"""What a ``peer_tokens`` value may be: a bearer token as HTTP carries it (RFC 6750's ``b64token``: letters,
digits, ``- . _ ~ + /``, then ``=`` at its end), at most ``MAX_CHARS`` long. Sentinel sends it as
``Authorization: Bearer <token>``; anything else would be a header injection (a line break ends the header
and starts another), a request the HTTP library refuses at the first send (non-ASCII, a control character:
some of its errors quote the header, so the secret), or a silent failure (empty: no header at all; spaces at
the ends, ``Bearer`` written twice, an unexpanded ``${VAR}``: a peer's 401 with no hint why).

Checked when the config loads (``A2ASettings``: an error at its key) and again where the header is built
(``peer_client.call_peer``), whatever gave the value. The reasons never quote the value: it is a secret.
"""

from __future__ import annotations

import re

# a header line of 8 KiB is what common servers take (nginx, Apache: 8190 bytes), "Authorization: Bearer "
# included; a JWT with many claims is 1-4 KiB
MAX_CHARS = 8000
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_SCHEME = re.compile(r"bearer[ \t]", re.I)


def token_problem(token: str) -> str | None:
    """Why ``token`` cannot be sent as a bearer token, or None. Never quotes it."""
    if _B64TOKEN.fullmatch(token) and len(token) <= MAX_CHARS:
        return None
    if not token:
        return "is empty: no token would be sent (leave the key out to send none)"
    if len(token) > MAX_CHARS:
        return f"is {len(token)} characters long, more than the {MAX_CHARS} a header line carries"
    if not token.isascii():
        return "holds characters outside ASCII: an HTTP header cannot carry them"
    if any(c < " " or c == "\x7f" for c in token):
        return ("holds a control character (a line break would end the header and start another: header "
                "injection)")
    if token != token.strip(" "):
        return "has spaces at its start or end"
    if "${" in token:
        return "still holds '${' after expansion: set the variable it names"
    if _SCHEME.match(token):
        return "starts with 'Bearer ': write the token alone (Sentinel sends 'Bearer ' before it)"
    if " " in token:
        return "holds a space: a bearer token is one word"
    return ("holds a character a bearer token cannot (RFC 6750: letters, digits, - . _ ~ + / and = at its "
            "end)")
