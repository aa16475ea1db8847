"""The owner's one-time link in a real headless Chromium: opening it shows a page and spends nothing (as a
link preview or a prefetch would open it); its button signs in. The token is after "#": in no URL the browser
sends (so in no access log) and no Referer (the style sheet's, the button's POST), only in the POST's body;
the page's script takes it off the address. The POST's Origin names the console (the HTTP host refuses
``Origin: null``, which ``Referrer-Policy: no-referrer`` would make of it)."""

from __future__ import annotations

import asyncio
import shutil

import httpx2
import pytest
from tests.console.console_rig import console_config, http_sentinel
from tests.console.test_console_sign_in_limit import link

pytestmark = pytest.mark.timeout(180)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


async def test_the_link_signs_in_by_its_button_only_and_leaks_no_token(tmp_path):
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")
    from playwright.async_api import async_playwright

    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        url = link(cfg, base)
        assert "#" in url
        token = url.rsplit("#", 1)[1]
        # a link preview first: a plain GET, which must leave the link for the person
        async with httpx2.AsyncClient(timeout=60, follow_redirects=False) as preview:
            r = await preview.get(url)
            assert r.status_code == 200 and "sentinel_console=" not in r.headers.get("set-cookie", "")
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = await browser.new_page()
            sent: list[tuple[str, str, dict[str, str]]] = []
            page.on("request", lambda req: sent.append((req.method, req.url, req.headers)))
            await page.goto(url)
            # the page, not signed in yet; its script took the token off the address
            assert page.url == f"{base}/console/login/once", page.url
            assert await page.input_value("#link-token") == token
            assert not [c for c in await page.context.cookies() if c["name"] == "sentinel_console"]
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            assert page.url.endswith("/console/inbox"), (page.url, (await page.content())[:1000])
            assert [c for c in await page.context.cookies() if c["name"] == "sentinel_console"]
            posts = [h for m, u, h in sent if m == "POST"]
            assert len(posts) == 1 and posts[0].get("origin") == base, posts
            # the token reached the server only in the POST's body: in no URL, no Referer
            for method, where, headers in sent:
                assert token not in headers.get("referer", ""), (method, where, headers.get("referer"))
                assert token not in where, where
            # the same link in another browser: used
            other = await browser.new_page()
            await other.goto(url)
            assert await other.input_value("#link-token") == token
            async with other.expect_navigation():
                await other.click("button[type=submit]")
            assert other.url.endswith("/console/login/once"), other.url
            assert "used, expired" in await other.inner_text("main")
            # a new link pasted there differs only after "#" (no page loads): the page takes it all the same
            fresh = link(cfg, base)
            await other.goto(fresh)
            assert await other.input_value("#link-token") == fresh.rsplit("#", 1)[1]
            assert other.url == f"{base}/console/login/once", other.url
            async with other.expect_navigation():
                await other.click("button[type=submit]")
            assert other.url.endswith("/console/inbox"), other.url
            await browser.close()


async def test_another_sites_form_carrying_a_link_signs_nobody_in_and_spends_nothing(tmp_path):
    """A page on another port of this host (the same site: the console's SameSite cookies go with its
    requests) that posts a link's token to the console, as a page that learnt one would: refused, and the
    link still signs in from its own page."""
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")
    import subprocess
    import sys

    from playwright.async_api import async_playwright

    from tests.identity.identity_rig import free_port

    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        url = link(cfg, base)
        token = url.rsplit("#", 1)[1]
        port = free_port()
        site = tmp_path / "site"
        site.mkdir()
        (site / "index.html").write_text(
            f'<html><body><form id="f" method="post" action="{base}/console/login/once">'
            f'<input name="token" value="{token}"><input name="csrf" value="{"0" * 64}"></form>'
            '<script>document.getElementById("f").submit();</script></body></html>'
        )
        server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                                  cwd=site, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                page = await browser.new_page()
                # the person opened the console's sign-in page before (its form cookie is in the browser)
                await page.goto(f"{base}/console/login")
                for _ in range(50):  # the other port's server may still be starting
                    try:
                        await page.goto(f"http://127.0.0.1:{port}/")
                        break
                    except Exception:
                        await asyncio.sleep(0.2)
                await page.wait_for_url(f"{base}/console/login/once", timeout=30_000)
                said = await page.inner_text("body")  # the host's Origin check, or the console's own
                assert "invalid Origin" in said or "another site" in said, said
                assert not [c for c in await page.context.cookies() if c["name"] == "sentinel_console"]
                # the link was not spent: its own page signs in (a new tab: the same address but for its
                # "#" would only scroll the page open there)
                page = await browser.new_page()
                await page.goto(url)
                async with page.expect_navigation():
                    await page.click("button[type=submit]")
                assert page.url.endswith("/console/inbox"), page.url
                await browser.close()
        finally:
            server.terminate()
            server.wait()
