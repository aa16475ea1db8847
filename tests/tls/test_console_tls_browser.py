"""In Chromium (Debian's, through Playwright) over the TLS front: the browser takes the console's
``__Host-`` session cookie (a ``__Host-`` cookie with a wrong attribute is dropped without a word, and nobody
could sign in), signs in and out with it, and a console cookie planted under another name (what a plain page
of this host or a sibling subdomain could set) neither replaces the person's session nor signs anyone in."""

from __future__ import annotations

import shutil

import pytest

from tests.identity.identity_rig import BOB, console_secret
from tests.tls.tls_rig import https_sentinel, tls_config

pytestmark = pytest.mark.timeout(240)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


async def test_chromium_keeps_the_host_only_session_and_ignores_a_planted_one(tmp_path, pki):
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")
    from playwright.async_api import async_playwright

    with https_sentinel(tls_config(tmp_path, pki), pki) as (base, _):
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            context = await browser.new_context(ignore_https_errors=True)  # the test CA, not the system's
            page = await context.new_page()
            await page.goto(f"{base}/console/inbox")
            assert page.url.endswith("/console/login"), page.url
            await page.fill("#secret", console_secret(BOB))
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            assert page.url.endswith("/console/inbox"), (page.url, (await page.content())[:1000])
            cookies = {c["name"]: c for c in await context.cookies()}
            session = cookies.get("__Host-sentinel_console")
            assert session is not None, cookies
            assert session["secure"] and session["httpOnly"] and session["path"] == "/", session
            assert session["sameSite"] == "Strict", session
            # the sign-in form's cookie went with the sign-in
            assert "__Host-sentinel_console_login" not in cookies, cookies

            # planted beside it, under the other names, with another session's value: still bob's session
            host = base.split("//", 1)[1].split(":", 1)[0]
            planted = [
                {"name": name, "value": "x" * 43, "domain": host, "path": path, "secure": secure}
                for name, path, secure in (
                    ("sentinel_console", "/console", False),
                    ("__Secure-sentinel_console", "/console/inbox", True),
                )
            ]
            await context.add_cookies(planted)  # type: ignore[arg-type]
            await page.goto(f"{base}/console/inbox")
            assert page.url.endswith("/console/inbox") and "bob" in await page.inner_text("body"), page.url

            # without the __Host- cookie, the planted ones sign nobody in
            await context.clear_cookies(name="__Host-sentinel_console")
            await page.goto(f"{base}/console/inbox")
            assert page.url.endswith("/console/login"), page.url

            # signing in again and out: the cookie is gone from the browser
            await page.fill("#secret", console_secret(BOB))
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            assert page.url.endswith("/console/inbox"), page.url
            async with page.expect_navigation():
                await page.click("form[action='/console/logout'] button:not([name])")
            assert page.url.endswith("/console/login"), page.url
            assert "__Host-sentinel_console" not in {c["name"] for c in await context.cookies()}
            await browser.close()
