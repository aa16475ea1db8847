"""Whether a configured token could ever be presented by a request: the fronts read ``Authorization`` and
``X-API-Key`` as Latin-1 header bytes with HTTP's spaces around the value taken off
(``identity/credentials.py``), so a token holding any character outside printable ASCII (an accent, a no-break
or zero-width space, a control character) or a space at either end never matches: refused where it is
configured, naming the key, rather than a principal that silently cannot sign in."""

from __future__ import annotations

RULE = ("can never be presented: a token is printable ASCII (no accents, no control or invisible "
        "characters) with no space at either end")


def presentable(token: str) -> bool:
    return all(" " <= c <= "~" for c in token) and token == token.strip(" ")
