"""The cookie jar the lean calls share with the SDK's client (``upstream_cookies``): what the upstream sets is
kept whole (a comma inside an ``Expires`` date splits nothing), sent back only where the jar's own rules
allow (domain, path, ``Secure``), and a configured ``Cookie`` header wins over the jar, as in httpx2. The
end to end case (a login kept by cookie, per principal, both eras) is in ``test_principal_isolation.py``."""

from __future__ import annotations

import httpx2

from sentinel_mcp.gateway.upstream_cookies import (MAX_COOKIE_BYTES, MAX_COOKIES, cookie_header, keep_cookies,
                                                   lean_jar)

URL = "http://127.0.0.1:8123/mcp"


def test_set_cookie_fields_are_kept_whole_and_sent_back_by_the_jars_rules() -> None:
    jar = httpx2.Cookies()
    assert cookie_header(jar, URL) is None and cookie_header(None, URL) is None
    keep_cookies(jar, URL, ["jar=a1; Expires=Wed, 09 Jun 2100 10:18:14 GMT; Path=/; HttpOnly",
                            "other=b2; Path=/elsewhere", "tls=c3; Secure; Path=/",
                            "foreign=d4; Domain=example.com; Path=/", "gone=e5; Max-Age=0; Path=/"])
    assert cookie_header(jar, URL) == "jar=a1"
    assert cookie_header(jar, "http://127.0.0.1:8123/elsewhere") == "other=b2; jar=a1"
    assert lean_jar(jar, {"Authorization": "x"}) is jar
    for spelling in ("Cookie", "cookie", "COOKIE"):
        assert lean_jar(jar, {spelling: "fixed=1"}) is None
    keep_cookies(None, URL, ["jar=x"])  # no jar: nothing kept, nothing raised


def test_a_jar_past_its_bounds_is_emptied_rather_than_grown_or_sent() -> None:
    for many in ([f"c{i}=v; Path=/" for i in range(MAX_COOKIES + 1)],
                 [f"big{i}={'v' * 4000}; Path=/" for i in range(MAX_COOKIE_BYTES // 4000 + 1)]):
        jar = httpx2.Cookies()
        keep_cookies(jar, URL, ["login=kept; Path=/"])
        keep_cookies(jar, URL, many)
        assert len(jar.jar) == 0 and cookie_header(jar, URL) is None
        keep_cookies(jar, URL, ["login=again; Path=/"])  # still usable: the next login is kept
        assert cookie_header(jar, URL) == "login=again"
    jar = httpx2.Cookies()
    keep_cookies(jar, URL, [f"c{i}=v; Path=/" for i in range(MAX_COOKIES)])  # at the bound: all kept
    assert len(jar.jar) == MAX_COOKIES
    jar.set("late", "x" * MAX_COOKIE_BYTES)  # filled behind the lean calls' back (the SDK's own answers)
    assert cookie_header(jar, URL) is None and len(jar.jar) == 0
