"""Requests another origin's page starts, over real HTTP and in a real Chromium: another port of this host is
the same site, so its pages' requests carry the console's ``SameSite=Strict`` cookie. Only the console's own
pages (and the person opening a page) are answered; nothing else a browser marks as started elsewhere."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import time

import httpx2
import pytest
from tests.console.console_rig import (ALICE, console_config, csrf_of, http_sentinel, mcp_client, signed_in,
                                      text)
from tests.identity.identity_rig import console_secret, free_port

pytestmark = pytest.mark.timeout(180)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# what a browser sends for a request another page started: an image, a frame, a script's fetch or
# EventSource, a frame's navigation, each from another port (same-site) or another site
ELSEWHERE = [
    {"sec-fetch-site": "same-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"},
    {"sec-fetch-site": "same-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe"},
    {"sec-fetch-site": "same-site", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty"},
    {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "script"},
    {"sec-fetch-site": "Same-Site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "embed"},
    {"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "object"},
]
TOP_LEVEL = {"sec-fetch-mode": "navigate", "sec-fetch-dest": "document"}


# how long a closed console page still counts as watching (10 s by default), lowered for the gateway below:
# the browser test waits it out; the other port's image reloads faster still (were it counted, every call is
# held)
GRACE_SECONDS = 3


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("fetch-metadata"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SENTINEL_CAP_WATCH_GRACE_SECONDS", str(GRACE_SECONDS))
        with http_sentinel(cfg) as (base, _proc):
            yield base


async def test_requests_another_origins_page_started_are_refused_but_opening_a_page_is_not(sentinel):
    """Before, only a form marked cross-site was refused: another port's page could load the console's live
    stream (the person then counts as watching) or any page with the person's cookie."""
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        for headers in ELSEWHERE:
            for path in ("/console/events", "/console/inbox", "/console/activity", "/console/sessions"):
                r = await alice.get(path, headers=headers)
                assert r.status_code == 403 and "another site" in r.text, (path, headers, r.status_code)
            csrf = csrf_of(await alice.page("/console/inbox"))
            for path in ("/console/logout", "/console/consents/revoke", "/console/inbox/x"):
                r = await alice.post(path, {"decision": "deny", "kind": "k"}, csrf=csrf, headers=headers)
                assert r.status_code == 403 and "another site" in r.text, (path, headers, r.status_code)
        for site in ("same-site", "cross-site"):  # a link to a page: shown (to the signed-in person)
            r = await alice.get("/console/inbox", headers={"sec-fetch-site": site, **TOP_LEVEL})
            assert r.status_code == 200, (site, r.status_code)
            # the live stream is never a page to open, even at the top level
            r = await alice.get("/console/events", headers={"sec-fetch-site": site, **TOP_LEVEL})
            assert r.status_code == 403, (site, r.status_code)
        for site in ("same-origin", "none"):  # the console's own pages, a typed address
            r = await alice.get("/console/inbox", headers={"sec-fetch-site": site, "sec-fetch-mode": "cors"})
            assert r.status_code == 200, (site, r.status_code)
        assert (await alice.get("/console/inbox")).status_code == 200  # no header: not a browser
        assert (await alice.page("/console/inbox")).count('name="csrf"') >= 1  # still signed in


async def test_the_sign_in_page_and_the_root_answer_no_other_sites_page_either(sentinel):
    """Before, /console/login and /console/ answered another port's image or fetch: the sign-in page told it
    whether the person was signed in (a redirect or the form) and set a new sign-in cookie each time, so a
    person signing in was told "the sign-in form expired" while the other page kept loading it."""
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        for headers in ELSEWHERE:
            for path in ("/console/login", "/console/"):
                r = await alice.get(path, headers=headers)
                assert r.status_code == 403 and "set-cookie" not in r.headers, (path, headers, r.status_code)
        for site in ("same-site", "cross-site", "same-origin", "none"):  # a link, or the person's own
            r = await alice.get("/console/login", headers={"sec-fetch-site": site, **TOP_LEVEL})
            assert r.status_code == 303 and r.headers["location"] == "/console/inbox", (site, r.status_code)
    async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as nobody:
        r = await nobody.get(f"{base}/console/login", headers={"sec-fetch-site": "same-site", **TOP_LEVEL})
        assert r.status_code == 200 and "set-cookie" in r.headers


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable (make test installs Debian's chromium)")
async def test_a_page_on_another_port_cannot_make_the_person_watching(sentinel, tmp_path):
    """In Chromium: the person signs in, then visits a page of another port of this host whose image reloads
    /console/events every 2 s. Before, that kept the person "watching", so a client that cannot be asked had
    its call held for an answer instead of told at once to answer in the console."""
    from playwright.async_api import async_playwright

    base = sentinel
    port = free_port()
    root = tmp_path
    (root / "index.html").write_text(
        f'<html><body><img id="i" src="{base}/console/events"><script>setInterval(function () '
        f'{{ document.getElementById("i").src = "{base}/console/events?" + Date.now(); }}, 2000);</script>'
        "</body></html>"
    )
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                page = await browser.new_page()
                await page.goto(base + "/console/login")
                await page.fill("input[name=secret]", console_secret(ALICE))
                await page.click("button[type=submit]")
                await page.wait_for_url("**/console/inbox")
                await page.goto(f"http://127.0.0.1:{port}/")
                await asyncio.sleep(GRACE_SECONDS + 2)  # past the grace of the console page that closed
                # On a loaded machine the server may see the closed page's event stream end late (the grace
                # runs from then), so the call is tried a few times; the other port's image reloads every 2 s
                # throughout, so were it counted as watching, every try would be held.
                told = None
                for _ in range(4):
                    async with mcp_client(base, ALICE) as client:
                        started = time.monotonic()
                        try:
                            result = await asyncio.wait_for(
                                client.call_tool("tb__delete_thing", {"name": "x"}), 8
                            )
                        except TimeoutError:
                            continue  # held: the person still counted as watching; try again
                        if time.monotonic() - started < 5:
                            told = text(result)
                            break
                assert told is not None, "every call was held: the person counted as watching"
                assert "waiting for the user" in told, told
            finally:
                await browser.close()
    finally:
        server.terminate()
        server.wait()
