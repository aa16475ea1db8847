"""Guessing console secrets is bounded, and the owner is never locked out.

What broke (red team, console): past 20 wrong secrets a minute an address got 429 for its further wrong ones,
but a right secret still signed in, so every guess was still checked and the limit slowed no guesser (a 429
on a wrong guess and a 303 on the right one tell them apart as well as a 401 does). Now, past the limit every
sign-in by the form from that address, right or wrong, is refused unchecked until its block ends; blocks in a
row double; all addresses together meet a cap; and the owner signs in by a one-time link the local CLI makes
(``sentinel-mcp config console-link``), which needs no guess and is taken whatever the blocks.

The clock-driven parts (a block ends, the next doubles, a quiet hour forgets) run on ``SignInLimit`` with an
injected clock; the rest on a real Sentinel over HTTP on 127.0.0.1, by counts only.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import subprocess
import sys
import urllib.parse

import httpx2
import pytest
from tests.console.console_rig import (OWNER_TOKEN, console_config, console_secret, csrf_of, env_for,
                                      http_sentinel)

from sentinel_mcp.console.sign_in_limit import (FIRST_BLOCK, MAX_BLOCK, MAX_FAILED_GLOBAL, MAX_FAILED_LOGINS,
                                                WINDOW, SignInLimit, address_key)

pytestmark = pytest.mark.timeout(240)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_past_the_limit_an_address_waits_and_each_block_in_a_row_doubles():
    clock = Clock()
    limit = SignInLimit(clock)
    blocks = []
    for _ in range(8):
        for _ in range(MAX_FAILED_LOGINS):
            limit.failed("203.0.113.7")
            assert limit.wait("203.0.113.7") == 0
        limit.failed("203.0.113.7")
        blocks.append(limit.wait("203.0.113.7"))
        assert limit.wait("198.51.100.1") == 0  # another address is not blocked by it
        clock.now += blocks[-1]  # the block ends: checked again, counted afresh
        assert limit.wait("203.0.113.7") == 0
    assert blocks == [min(FIRST_BLOCK * 2**i, MAX_BLOCK) for i in range(8)]
    assert blocks[-1] == MAX_BLOCK
    clock.now += MAX_BLOCK + 1  # a quiet hour forgets the blocks in a row
    for _ in range(MAX_FAILED_LOGINS + 1):
        limit.failed("203.0.113.7")
    assert limit.wait("203.0.113.7") == FIRST_BLOCK


def test_wrong_secrets_spread_over_a_window_are_not_counted_together():
    clock = Clock()
    limit = SignInLimit(clock)
    for _ in range(3 * MAX_FAILED_LOGINS):
        limit.failed("203.0.113.7")
        clock.now += WINDOW / MAX_FAILED_LOGINS  # one per its share of the window: never past the limit
        assert limit.wait("203.0.113.7") == 0


def test_many_addresses_meet_one_cap_and_an_ipv6_prefix_counts_as_one():
    clock = Clock()
    limit = SignInLimit(clock)
    for i in range(MAX_FAILED_GLOBAL):
        limit.failed(f"10.0.{i // 250}.{i % 250}")
    assert limit.wait("192.0.2.1") == 0
    limit.failed("10.9.9.9")
    assert limit.wait("192.0.2.1") == FIRST_BLOCK  # everybody, a fresh address too
    clock.now += FIRST_BLOCK
    assert limit.wait("192.0.2.1") == 0
    # an IPv6 subscriber has a /64: each of its addresses is the same guesser
    limit = SignInLimit(clock)
    for i in range(MAX_FAILED_LOGINS + 1):
        limit.failed(f"2001:db8:1:2::{i + 1:x}")
    assert limit.wait("2001:db8:1:2:ffff::1") == FIRST_BLOCK
    assert limit.wait("2001:db8:1:3::1") == 0
    assert address_key("::ffff:192.0.2.1") == address_key("192.0.2.1") == "192.0.2.1"


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sign-in-limit")
    cfg = console_config(tmp)
    with http_sentinel(cfg) as (base, _proc):
        yield base, cfg


async def sign_in(http: httpx2.AsyncClient, base: str, secret: str) -> httpx2.Response:
    form = await http.get(f"{base}/console/login")
    assert form.status_code == 200, form.status_code
    body = urllib.parse.urlencode([("csrf", csrf_of(form.text)), ("secret", secret)])
    return await http.post(f"{base}/console/login", content=body.encode(),
                           headers={"origin": base, "content-type": "application/x-www-form-urlencoded"})


async def signed_in(http: httpx2.AsyncClient, base: str) -> bool:
    page = await http.get(f"{base}/console/inbox")
    assert page.status_code in (200, 303), page.status_code
    return page.status_code == 200


def link(cfg, base: str) -> str:
    out = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "console-link",
                          "--url", base], capture_output=True, text=True, timeout=60, env=env_for(cfg))
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


async def open_link(http: httpx2.AsyncClient, base: str, url: str) -> httpx2.Response:
    """What the person does with the link: open it (a page, nothing spent) and press its button (the POST
    that signs in, ``test_console_sign_in_forms``)."""
    page = await http.get(url.split("#", 1)[0])
    if page.status_code != 200:
        return page
    # the page's script fills the field from after "#" (a link in the old spelling: the page, from the path)
    token = url.split("#", 1)[1] if "#" in url else html.unescape(
        re.search(r'name="token" type="text" value="([^"]*)"', page.text).group(1))
    return await http.post(f"{base}/console/login/once", data={"csrf": csrf_of(page.text), "token": token},
                           headers={"origin": base})


async def test_past_the_limit_the_right_secret_is_refused_too_and_the_owners_link_still_signs_in(sentinel):
    base, cfg = sentinel
    right = console_secret(OWNER_TOKEN)
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        for i in range(MAX_FAILED_LOGINS):
            r = await sign_in(http, base, f"wrong-secret-{i:04d}-0123456789")
            assert r.status_code == 401, (i, r.status_code)
        r = await sign_in(http, base, "wrong-secret-last-0123456789")
        assert r.status_code == 429, r.status_code
        # the right secret now: refused unchecked, as a wrong one is (it used to sign in: 303)
        r = await sign_in(http, base, right)
        assert r.status_code == 429 and "console-link" in r.text, (r.status_code, r.text[:300])
        assert "sentinel_console=" not in r.headers.get("set-cookie", "")
        assert not await signed_in(http, base)
        # the owner's way in needs no guess: a link from the local CLI, used once
        url = link(cfg, base)
        assert url.startswith(f"{base}/console/login/once#"), url
        r = await open_link(http, base, url)
        assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.status_code
        assert await signed_in(http, base)
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        again = await open_link(http, base, url)  # used: signs nobody in
        assert again.status_code == 401 and "sentinel_console=" not in again.headers.get("set-cookie", "")
        assert not await signed_in(http, base)


MADE_UP = ["A" * 43, "-" * 43, "A" * 42, "A" * 44, "..%2F..%2Fhttp-token", "%00", "A" * 43 + "%0A"]


async def test_a_link_not_made_here_signs_nobody_in(sentinel):
    base, cfg = sentinel
    made = link(cfg, base)
    token = made.rsplit("#", 1)[1]
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
        for spelling in [*MADE_UP, token.upper(), token[:-1], token + "A", token[::-1]]:
            r = await open_link(http, base, f"{base}/console/login/once/{spelling}")
            assert r.status_code in (400, 401, 404), (spelling, r.status_code)
            assert not await signed_in(http, base), spelling
        # a query or another site's page: refused, and the link is not used up by it
        assert (await http.get(f"{base}/console/login/once?x=1")).status_code == 400
        assert (await http.get(f"{base}/console/login/once/{token}?x=1")).status_code == 400
        r = await http.get(made, headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors",
                                          "sec-fetch-dest": "image"})
        assert r.status_code == 403 and not await signed_in(http, base)
        r = await open_link(http, base, made)
        assert r.status_code == 303 and await signed_in(http, base), r.status_code


@contextlib.asynccontextmanager
async def console_on_loopback(limit: SignInLimit, secret: str):
    """The console's own app (``build_console``) served by uvicorn on 127.0.0.1 in this process, with a
    sign-in limit on the test's clock; alice signs in with ``secret``."""
    import uvicorn
    from starlette.applications import Starlette

    from sentinel_mcp.console.app import ConsoleSettings, build_console
    from sentinel_mcp.console.segment_routes import SegmentMount
    from sentinel_mcp.core.host import HostState
    from sentinel_mcp.identity.principal import Principal
    from sentinel_mcp.identity.resolver import Authenticator, TokenResolver

    tokens, secrets_ = TokenResolver(), TokenResolver()
    alice = Principal("alice", "token")
    tokens.add(alice, token="alice-token-0123456789abcdef")
    secrets_.add(alice, token=secret)
    console, _inbox = build_console(HostState(), Authenticator([tokens]), ConsoleSettings({}), secrets_,
                                    None, limit)
    app = Starlette(routes=[SegmentMount("/console", app=console)])
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def test_over_http_a_block_ends_when_its_time_has_passed_and_the_next_is_twice_as_long():
    clock = Clock()
    secret = "alice's console secret, 0123456789"
    async with console_on_loopback(SignInLimit(clock), secret) as base:
        for block in (FIRST_BLOCK, 2 * FIRST_BLOCK):
            async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as http:
                statuses = [(await sign_in(http, base, f"wrong-{i:03d}-0123456789")).status_code
                            for i in range(MAX_FAILED_LOGINS + 1)]
                assert statuses == [401] * MAX_FAILED_LOGINS + [429], statuses
                clock.now += block - 1  # a second before the block ends: the right secret is refused
                r = await sign_in(http, base, secret)
                assert r.status_code == 429 and "sentinel_console=" not in r.headers.get("set-cookie", "")
                clock.now += 1
                r = await sign_in(http, base, secret)  # (no gateway runs here: the session cookie tells)
                assert r.status_code == 303, r.status_code
                assert "sentinel_console=" in r.headers.get("set-cookie", "")
