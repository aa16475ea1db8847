"""An HTTP upstream's ``url`` (``mcpServers.<name>.url``), read one way when the config loads.

Why: it is parsed again by each client (the lean one with ``urlsplit``, the MCP SDK's with httpx) and by the
checks that decide what a server on loopback may do (``config.loopback_host``). A URL parsers disagree on
(a space, a control character, a backslash: ``http://evil.example\\@127.0.0.1/`` is loopback to one reading
and evil.example to a browser's), with no host, a port out of range, a host that is not ASCII (a look-alike of
another name) or a shorthand address (``127.1``) named no one place: it loaded, then failed at every connect,
or was taken for whatever one parser read. Each is an error quoting the URL without its credentials.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from sentinel_mcp.core.untrusted_address import AddressRefused, parse_host
from sentinel_mcp.core.url_credentials import without_credentials

_UNSAFE = re.compile(r"[\x00-\x1f\x7f]|(?P<space>\s)|(?P<backslash>\\)")


def checked_url(url: str) -> str:
    """``url``, or ValueError saying why it names no one place an HTTP upstream answers at."""
    if not url.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    bad = _UNSAFE.search(url)
    if bad is not None:
        what = ("a space" if bad["space"] else "a backslash" if bad["backslash"] else
                f"a control character (U+{ord(bad.group()):04X})")
        # (not quoted: the URL without its credentials may not hold the character)
        raise ValueError(f"holds {what} at character {bad.start() + 1}: URL parsers disagree on where such a "
                         "URL goes (percent-encode it in a path: %20, %5C)")
    shown = without_credentials(url)[:200]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ValueError(f"{shown!r} has a port that is no number from 1 to 65535") from None
    if not parts.hostname:
        raise ValueError(f"{shown!r} names no host")
    if port == 0:
        raise ValueError(f"{shown!r} has port 0, which no server answers at")
    try:
        parse_host(parts.hostname)
    except AddressRefused as e:
        raise ValueError(f"{shown!r}: {e}") from None
    return url
