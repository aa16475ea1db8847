"""An HTTP upstream's cookies: one jar per connection to it, the SDK client's, which the lean calls
(``lean_upstream``) send from and store into as well.

A server that keeps a client's state by cookie (a web login; on 2026-07-28, which has no MCP session, the
usual way to keep any) sees one client per ``Upstream``: a tool call on the lean path and a prompt or a
read through the SDK carry the same cookies. Without this the lean calls carried none, so what the server
set was lost on every tool call. The jar is the connection's, so it is as wide as the session it belongs
to: under ``isolation: "per_principal"`` one principal's, gone when that session closes or reconnects.
A configured ``Cookie`` header wins over the jar, as it does in httpx2 (``lean_jar``).

The upstream is hostile: a jar holding more than ``MAX_COOKIES`` cookies or ``MAX_COOKIE_BYTES`` of names and
values (a server setting a new one on every answer) is emptied, said in the log, wherever a lean call finds it
so (after storing an answer's, before sending): bounded memory per session, and no header the server blew up
is sent back.
"""

from __future__ import annotations

import logging
import urllib.request
from typing import Any, Mapping

import httpx2

log = logging.getLogger(__name__)

MAX_COOKIES = 64  # in one session's jar (browsers keep some 50 to 180 per site)
MAX_COOKIE_BYTES = 16 * 1024  # their names and values together


def lean_jar(jar: httpx2.Cookies | None, configured: Mapping[str, str]) -> httpx2.Cookies | None:
    """The jar the lean calls use: none when the configuration sets the ``Cookie`` header itself."""
    return None if any(k.lower() == "cookie" for k in configured) else jar


def cookie_header(jar: httpx2.Cookies | None, url: str) -> str | None:
    """The ``Cookie`` header the jar holds for ``url`` (its domain, path, expiry and ``Secure`` checked by
    the standard library's jar), or None."""
    if jar is None or not len(jar.jar) or not _within_bounds(jar):  # the common case: nothing to send
        return None
    # the standard library's request, not httpx2's: the jar reads only its URL, at half the cost per call
    request = urllib.request.Request(url, method="POST")
    jar.jar.add_cookie_header(request)
    return request.unredirected_hdrs.get("Cookie")


def keep_cookies(jar: httpx2.Cookies | None, url: str, set_cookies: list[str]) -> None:
    """What the answer's ``Set-Cookie`` fields say, stored as the SDK's client stores them."""
    if jar is None or not set_cookies:
        return
    request = httpx2.Request("POST", url)
    answer: Any = httpx2.Response(200, headers=[("set-cookie", v) for v in set_cookies], request=request)
    jar.extract_cookies(answer)
    _within_bounds(jar)


def _within_bounds(jar: httpx2.Cookies) -> bool:
    """True when the jar holds no more than its bounds; else it is emptied (False)."""
    cookies = list(jar.jar)
    size = sum(len(c.name) + len(c.value or "") for c in cookies)
    if len(cookies) <= MAX_COOKIES and size <= MAX_COOKIE_BYTES:
        return True
    log.warning("an HTTP upstream set more cookies than a session keeps (%d; at most %d, %d bytes): all "
                "dropped", len(cookies), MAX_COOKIES, MAX_COOKIE_BYTES)
    jar.jar.clear()
    return False
