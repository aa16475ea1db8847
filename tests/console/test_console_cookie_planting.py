"""Cookies planted for the console's name (by a page on another port of 127.0.0.1: cookies ignore ports) do
not stop the person signing in or using the console: a planted value that is no live session, or a planted
sign-in cookie, is passed over; two live sessions stay nobody's (``test_console_bounds``); a Cookie header
past the head's bound gets a page saying what to do, and the console serves the next request. Real HTTP on
127.0.0.1 against a real Sentinel."""

from __future__ import annotations

import httpx2
import pytest
from tests.console.console_rig import ALICE, console_config, console_secret, csrf_of, http_sentinel, signed_in

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("cookie-planting"))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def _page(base: str, cookie: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as raw:
        return await raw.get(f"{base}/console/inbox", headers={"cookie": cookie})


async def test_a_planted_value_beside_the_session_is_passed_over(sentinel):
    base = sentinel
    async with signed_in(base, ALICE) as gone:
        ended = gone.http.cookies.get("sentinel_console")
        assert (await gone.post("/console/logout", {})).status_code == 303  # a session of hers, ended
    async with signed_in(base, ALICE) as alice:
        mine = alice.http.cookies.get("sentinel_console")
        plants = ["x", "", '"quoted"', "A" * 3000, ended, mine + "x", "sentinel_console=" + mine, "%00"]
        for planted in plants:
            for cookie in (f"sentinel_console={planted}; sentinel_console={mine}",
                           f"sentinel_console={mine}; sentinel_console={planted}",
                           f"sentinel_console={planted}; other=1; sentinel_console={planted}; "
                           f"sentinel_console={mine}"):
                r = await _page(base, cookie)
                assert r.status_code == 200 and "alice" in r.text.lower(), (planted[:40], r.status_code)
        # the Cookie header sent twice (Starlette reads the first only): the second's session counts too
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as raw:
            twice = [("cookie", "sentinel_console=junk"), ("cookie", f"sentinel_console={mine}")]
            r = await raw.get(f"{base}/console/inbox", headers=twice)
            assert r.status_code == 200 and "alice" in r.text.lower(), r.status_code
        # a thousand small cookies of other names (within the head's bound) change nothing either
        flood = "; ".join(f"c{i}=v" for i in range(1000))
        r = await _page(base, f"{flood}; sentinel_console=junk; sentinel_console={mine}")
        assert r.status_code == 200 and "alice" in r.text.lower()
        # planted values alone are nobody's
        for cookie in ("sentinel_console=x", f"sentinel_console={ended}",
                       "sentinel_console=x; sentinel_console="):
            r = await _page(base, cookie)
            assert r.status_code == 303 and r.headers["location"].endswith("/console/login"), cookie


async def test_a_planted_sign_in_cookie_does_not_stop_the_person_signing_in(sentinel):
    base = sentinel
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as planter:
        planted = (await planter.get(f"{base}/console/login")).cookies.get("sentinel_console_login")
    for junk in ("x", planted, "", "B" * 2000):
        for order in (0, 1):
            async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as tab:
                form = await tab.get(f"{base}/console/login")
                nonce = tab.cookies.get("sentinel_console_login")
                pair = [f"sentinel_console_login={nonce}", f"sentinel_console_login={junk}"]
                r = await tab.post(
                    f"{base}/console/login",
                    content=f"csrf={csrf_of(form.text)}&secret={console_secret(ALICE)}".encode(),
                    headers={"origin": base, "content-type": "application/x-www-form-urlencoded",
                             "cookie": "; ".join(pair if order == 0 else pair[::-1])},
                )
                assert r.status_code == 303 and r.headers["location"] == "/console/inbox", (
                    junk[:20], order, r.status_code)
    # the planter's own cookie with the planter's own token is no way in without the secret
    async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as tab:
        form = await tab.get(f"{base}/console/login")
        r = await tab.post(f"{base}/console/login", data={"csrf": csrf_of(form.text), "secret": "wrong"},
                           headers={"origin": base})
        assert r.status_code == 401


async def test_an_oversized_cookie_header_gets_a_page_saying_what_to_do(sentinel):
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        mine = alice.http.cookies.get("sentinel_console")
        for cookie in ("big=" + "A" * 20_000, "; ".join(f"k{i}={'v' * 100}" for i in range(300))):
            for path in ("/console/inbox", "/console/login"):
                async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as raw:
                    r = await raw.get(f"{base}{path}",
                                      headers={"cookie": f"{cookie}; sentinel_console={mine}"})
                assert r.status_code == 431, (path, r.status_code)
                assert r.headers["content-type"].startswith("text/plain")
                assert r.headers["x-frame-options"] == "DENY"
                assert "cookies" in r.text and "Remove this site's cookies" in r.text, r.text
        assert (await alice.get("/console/inbox")).status_code == 200  # served again at once
