"""The owner's one-time link signs in only by a POST, and a guesser's flood locks out only whom it names.

What broke (red team, console):
1. ``GET /console/login/once/<token>`` signed the owner in, so whatever fetched the link first (a chat
   app's link preview, a mail scanner, the browser's prefetch) spent it, and the session cookie went to
   that fetcher. Now the GET shows a page whose button POSTs the token in the form body (the form's own
   double-submit token beside it); only the POST signs in. The page's Referrer-Policy keeps the path (the
   token) out of every Referer; the POST's Origin still names the console (``no-referrer`` would make it
   ``null``, which the HTTP host refuses).
2. Past the cap across addresses, every sign-in by the form was refused for up to an hour: a flood of
   wrong secrets from many addresses locked every principal out. Now a person may name their principal
   with their secret: a named sign-in is counted against that name alone (across all addresses, the same
   bound on guesses at any one principal's secret), so a flood against others (or against no name) leaves
   them signing in; the unnamed form keeps the per-address limit and the cap.

In-process console app (``build_console``) on 127.0.0.1 with a test clock, real HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import urllib.parse
from pathlib import Path

import httpx2
import pytest

from sentinel_mcp.console.sign_in_limit import (MAX_FAILED_GLOBAL, MAX_FAILED_PER_ADDRESS_AND_NAME,
                                                SignInLimit)
from sentinel_mcp.identity import console_link

pytestmark = pytest.mark.timeout(240)

OWNER_SECRET = "the owner's console secret, 0123456789abcdef"
ALICE_SECRET = "alice's console secret, 0123456789abcdef"
BOB_SECRET = "bob's console secret, 0123456789abcdefgh"
CSRF = re.compile(r'name="csrf" value="([0-9a-f]{64})"')
TOKEN_FIELD = re.compile(r'id="link-token" name="token" type="text" value="([^"]*)"')


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def console_app(limit: SignInLimit, data_dir: Path | None):
    """The console's own app served by uvicorn on 127.0.0.1 in this process: the owner, alice and bob each
    with a console secret; links from ``data_dir``."""
    import uvicorn
    from starlette.applications import Starlette

    from sentinel_mcp.console.app import ConsoleSettings, build_console
    from sentinel_mcp.console.segment_routes import SegmentMount
    from sentinel_mcp.core.host import HostState
    from sentinel_mcp.identity.principal import OWNER_NAME, Principal
    from sentinel_mcp.identity.resolver import Authenticator, TokenResolver

    tokens, secrets_ = TokenResolver(), TokenResolver()
    for name, secret in ((OWNER_NAME, OWNER_SECRET), ("alice", ALICE_SECRET), ("bob", BOB_SECRET)):
        p = Principal(name, "token")
        tokens.add(p, token=f"{name}-token-0123456789abcdef")
        secrets_.add(p, token=secret)
    console, _inbox = build_console(HostState(), Authenticator([tokens]), ConsoleSettings({}), secrets_,
                                    data_dir, limit)
    app = Starlette(routes=[SegmentMount("/console", app=console)])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="off"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await task


def session_set(r: httpx2.Response) -> bool:
    return "sentinel_console=" in r.headers.get("set-cookie", "")


async def sign_in(http: httpx2.AsyncClient, base: str, secret: str, name: str | None = None
                  ) -> httpx2.Response:
    form = await http.get(f"{base}/console/login")
    assert form.status_code == 200, form.status_code
    fields = [("csrf", CSRF.search(form.text).group(1)), ("secret", secret)]
    if name is not None:
        fields.append(("name", name))
    return await http.post(f"{base}/console/login", content=urllib.parse.urlencode(fields).encode(),
                           headers={"origin": base, "content-type": "application/x-www-form-urlencoded"})


# ------------------------------------------------------------------ 1. the link signs in by a POST only
async def test_opening_the_link_signs_nobody_in_and_spends_nothing_the_pages_button_does(tmp_path):
    token = console_link.create(tmp_path)
    async with console_app(SignInLimit(Clock()), tmp_path) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as preview:
            # a link preview, a scanner, a prefetch: each GET is only the page, and leaves the link whole
            for _ in range(3):
                r = await preview.get(f"{base}/console/login/once/{token}")
                assert r.status_code == 200 and not session_set(r), (r.status_code, r.headers)
                assert r.headers["referrer-policy"] in ("no-referrer", "strict-origin"), r.headers
                assert r.headers["cache-control"] == "no-store"
                assert "frame-ancestors 'none'" in r.headers["content-security-policy"]  # no clickjacking
                assert r.headers["x-frame-options"] == "DENY"
                assert '<form method="post" action="/console/login/once"' in r.text, r.text[:2000]
                assert TOKEN_FIELD.search(r.text).group(1) == token
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as person:
            page = await person.get(f"{base}/console/login/once/{token}")
            fields = {"csrf": CSRF.search(page.text).group(1),
                      "token": TOKEN_FIELD.search(page.text).group(1)}
            r = await person.post(f"{base}/console/login/once", data=fields, headers={"origin": base})
            assert r.status_code == 303 and r.headers["location"] == "/console/inbox", (r.status_code, r.text)
            assert session_set(r)
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as other:
            page = await other.get(f"{base}/console/login/once/{token}")
            fields["csrf"] = CSRF.search(page.text).group(1)
            again = await other.post(f"{base}/console/login/once", data=fields, headers={"origin": base})
            assert again.status_code == 401 and not session_set(again)  # used once


async def test_the_link_as_made_keeps_its_token_after_the_hash_and_the_page_asks_for_it(tmp_path):
    """The token after "#" never reaches the server (a fragment is the browser's own: no access log line, no
    Referer): the page at the link's path has an empty field its script fills; the POST signs in."""
    from sentinel_mcp.identity.console_link import LINK_PATH

    assert LINK_PATH == "/console/login/once#"
    token = console_link.create(tmp_path)
    async with console_app(SignInLimit(Clock()), tmp_path) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            page = await http.get(f"{base}/console/login/once")
            assert page.status_code == 200 and TOKEN_FIELD.search(page.text).group(1) == "", page.status_code
            assert '<script src="/console/static/link.js" defer></script>' in page.text
            r = await http.post(f"{base}/console/login/once", headers={"origin": base},
                                data={"csrf": CSRF.search(page.text)[1], "token": token})
            assert r.status_code == 303 and session_set(r), r.status_code


async def test_the_links_post_needs_the_pages_own_form_and_no_other_sites(tmp_path):
    token = console_link.create(tmp_path)
    async with console_app(SignInLimit(Clock()), tmp_path) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            page = await http.get(f"{base}/console/login/once/{token}")
            csrf = CSRF.search(page.text).group(1)
            refused = [
                ({"token": token}, {}),  # no form token
                ({"token": token, "csrf": "0" * 64}, {}),  # not the page's
                ({"token": token, "csrf": csrf},  # another site's form
                 {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate",
                  "sec-fetch-dest": "document"}),
            ]
            for fields, headers in refused:
                r = await http.post(f"{base}/console/login/once", data=fields,
                                    headers={"origin": base, **headers})
                assert r.status_code in (401, 403) and not session_set(r), (fields, headers, r.status_code)
            # none of those spent it (a refusal gives a fresh form: its token is the one sent now)
            csrf = CSRF.search((await http.get(f"{base}/console/login/once/{token}")).text).group(1)
            r = await http.post(f"{base}/console/login/once", data={"token": token, "csrf": csrf},
                                headers={"origin": base})
            assert r.status_code == 303 and session_set(r), r.status_code
        # the token in the URL of the POST (the old GET's place) is not a way in either
        token = console_link.create(tmp_path)
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            page = await http.get(f"{base}/console/login/once/{token}")
            r = await http.post(f"{base}/console/login/once/{token}",
                                data={"csrf": CSRF.search(page.text)[1]}, headers={"origin": base})
            assert r.status_code in (401, 404, 405) and not session_set(r), r.status_code


async def test_a_hostile_token_in_the_link_is_shown_escaped_and_signs_nobody_in(tmp_path):
    async with console_app(SignInLimit(Clock()), tmp_path) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            for spelling in ['"><script>alert(1)</script>', "A" * 43 + '" autofocus onfocus="x', "A" * 5000]:
                r = await http.get(f"{base}/console/login/once/{urllib.parse.quote(spelling, safe='')}")
                assert r.status_code in (200, 400), r.status_code
                assert "<script>alert" not in r.text and 'onfocus="x' not in r.text
                if r.status_code == 200:
                    sent = html.unescape(TOKEN_FIELD.search(r.text).group(1))
                    assert sent == spelling
                    p = await http.post(f"{base}/console/login/once",
                                        data={"csrf": CSRF.search(r.text)[1], "token": sent},
                                        headers={"origin": base})
                    assert p.status_code == 401 and not session_set(p)


async def test_a_browser_signed_in_as_another_principal_gets_the_links_page_and_its_button_signs_in(tmp_path):
    token = console_link.create(tmp_path)
    async with console_app(SignInLimit(Clock()), tmp_path) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            assert (await sign_in(http, base, ALICE_SECRET, name="alice")).status_code == 303
            page = await http.get(f"{base}/console/login/once/{token}")
            assert page.status_code == 200 and TOKEN_FIELD.search(page.text), page.status_code
            r = await http.post(f"{base}/console/login/once", headers={"origin": base},
                                data={"csrf": CSRF.search(page.text)[1], "token": token})
            assert r.status_code == 303 and session_set(r), r.status_code


# ------------------------------------------------------------------ 2. a flood locks out only whom it names
async def test_a_flood_from_many_addresses_leaves_a_principal_who_names_itself_signing_in():
    clock = Clock()
    limit = SignInLimit(clock)
    # the attacker: wrong secrets from many addresses, unnamed, past the cap across addresses
    for i in range(MAX_FAILED_GLOBAL + 1):
        limit.failed(f"10.0.{i // 250}.{i % 250}")
    assert limit.wait("192.0.2.1") > 0  # the unnamed form: closed for everybody, as before
    async with console_app(limit, None) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as victim:
            r = await sign_in(victim, base, BOB_SECRET)
            assert r.status_code == 429 and "name" in r.text, r.status_code  # says how to get in
            r = await sign_in(victim, base, BOB_SECRET, name="bob")
            assert r.status_code == 303 and session_set(r), (r.status_code, r.text[:500])


async def test_a_flood_against_one_name_blocks_that_name_only_and_bounds_the_guesses_at_it():
    clock = Clock()
    async with console_app(SignInLimit(clock), None) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as attacker:
            # one address: stopped under that name by its own count (test_console_sign_in_devices: one address
            # never closes a name to others; many meet the name's count)
            statuses = [(await sign_in(attacker, base, f"guess-{i:04d}-0123456789", name="alice")).status_code
                        for i in range(MAX_FAILED_PER_ADDRESS_AND_NAME + 1)]
            assert statuses == [401] * MAX_FAILED_PER_ADDRESS_AND_NAME + [429], statuses
            # alice's own secret is refused unchecked now (the guesser learns nothing from a right guess)
            r = await sign_in(attacker, base, ALICE_SECRET, name="alice")
            assert r.status_code == 429 and not session_set(r)
            # a name in another spelling is the same name, never a fresh count
            for spelling in (" alice", "alice ", "ALICE", "Alice"):
                r = await sign_in(attacker, base, ALICE_SECRET, name=spelling)
                assert r.status_code in (401, 429) and not session_set(r), (spelling, r.status_code)
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as victim:
            # from the same address (one host here): bob names himself and signs in
            r = await sign_in(victim, base, BOB_SECRET, name="bob")
            assert r.status_code == 303 and session_set(r), r.status_code
        clock.now += 3600 * 2
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as alice:
            r = await sign_in(alice, base, ALICE_SECRET, name="alice")
            assert r.status_code == 303 and session_set(r), r.status_code


async def test_a_secret_signs_in_only_under_its_own_name():
    async with console_app(SignInLimit(Clock()), None) as base:
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
            for name in ("alice", "nobody", "", "x" * 300):
                r = await sign_in(http, base, BOB_SECRET, name=name)
                if name == "":  # no name: the unnamed form, bob's secret is bob's
                    assert r.status_code == 303, r.status_code
                    http.cookies.clear()
                    continue
                assert r.status_code in (400, 401) and not session_set(r), (name[:20], r.status_code)
