"""Every console page that shows what a client, a tool call or the audit made, in a real headless Chromium:
markup, script, ``javascript:`` links, attribute breakouts and CSS in a session id, a fact, a call's tool
arguments, the audit row and its proof, and the query values a page shows back are text. No dialog opens, no
element or attribute comes from them (an image, a script, a style, a handler, a link out of the console), and
each page still shows them visibly. The page's own Content-Security-Policy would stop an inline script
anyway: the DOM check is the one that fails if a value ever became markup."""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any
from urllib.parse import quote

import pytest

from sentinel_mcp.console.links import console_path
from tests.console.console_rig import (ALICE, BOB, OWNER_TOKEN, console_config, console_secret, http_sentinel,
                                      items_of,
                                      mcp_client, signed_in, text)
from tests.console.test_console_browser import CHROMIUM

pytestmark = pytest.mark.timeout(240)

PAYLOAD = (
    "\"'><img src=x onerror=alert(1)><svg/onload=alert(2)></code></a><script>alert(3)</script>"
    "<a href=javascript:alert(4)>j</a><style>body{display:none}</style><iframe src=javascript:alert(5)>"
)
SID = "alice/" + PAYLOAD
FACT = f"note('{PAYLOAD}')"
# what no value may have made: every element and attribute here is one the console's templates never write
INJECTED = """() => {
  const bad = [...document.querySelectorAll(
    'img, svg, script:not([src="/console/static/console.js"]), iframe, object, embed, style, ' +
    'link:not([href="/console/static/console.css"]), [style], [onerror], [onload], [onclick], [onfocus]')]
    .map(e => e.outerHTML.slice(0, 80));
  const links = [...document.querySelectorAll('a[href], form[action]')]
    .map(e => e.getAttribute('href') ?? e.getAttribute('action'))
    .filter(h => !(h.startsWith('/console/') || h.startsWith('#')));
  return bad.concat(links);
}"""


@pytest.fixture
def playwright_ok():
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    from sentinel_mcp.config import load_config
    from sentinel_mcp.policy.fact_store import Fact, FactStore
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    cfg = console_config(tmp_path_factory.mktemp("console-browser-hostile"))
    # the held call carries argument names the toolbox does not declare (how the page shows a client's hostile
    # names is the question here): its upstream passes them on to the guard and the inbox
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"]["undeclared_arguments"] = "pass"
    cfg.write_text(json.dumps(body))

    async def plant() -> None:
        path = facts_db_path(load_config(cfg))
        path.parent.mkdir(parents=True, exist_ok=True)
        store = await FactStore(path).open()
        until = time.time() + 3600
        await store.add([
            Fact(session=SID, predicate="note", args=[arg], fact=fact, provenance="observed",
                 source_tool=PAYLOAD[:90], expires_at=until)
            for fact, arg in ((FACT, PAYLOAD),)
        ])
        await store.close()

    asyncio.run(plant())
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def _denied_hostile_call(base: str) -> None:
    """A held call of hostile arguments, denied in the console: its audit row and proof hold them."""
    async with signed_in(base, BOB) as bob, mcp_client(base, BOB) as c:
        first = await c.call_tool("tb__delete_thing", {"name": PAYLOAD, PAYLOAD[:60]: PAYLOAD})
        assert first.is_error and "waiting for the user" in text(first)
        [item] = items_of(await bob.wait_items(1))
        r = await bob.post(f"/console/inbox/{item}", {"decision": "deny"})
        assert r.status_code == 303


async def test_no_value_from_a_client_a_call_or_the_audit_is_markup_in_a_browser(sentinel, playwright_ok):
    from playwright.async_api import async_playwright

    base = sentinel
    await _denied_hostile_call(base)
    q = quote(PAYLOAD[:190], safe="")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            dialogs: list[str] = []

            async def person(token: str) -> Any:
                page = await (await browser.new_context()).new_page()
                page.on("dialog", lambda d: (dialogs.append(d.message), asyncio.ensure_future(d.dismiss())))
                await page.goto(f"{base}/console/login")
                await page.fill("#secret", console_secret(token))
                async with page.expect_navigation():
                    await page.click("button[type=submit]")
                return page

            async def check(page: Any, path: str, must_show: str) -> None:
                r = await page.goto(base + path)
                assert r.status in (200, 404), (path, r.status)
                await page.wait_for_load_state("load")
                assert await page.evaluate(INJECTED) == [], path
                assert await page.is_visible("main"), path  # no CSS hid it
                shown = await page.inner_text("main")
                values = [await page.input_value(f"#{i}") for i in ("fact-filter",)
                          if await page.locator(f"#{i}").count()]
                assert must_show in shown or must_show in values, (path, shown[:1500])

            alice = await person(ALICE)
            await check(alice, "/console/sessions", "<img src=x onerror=alert(1)>")
            await check(alice, console_path("sessions", SID), "<script>alert(3)</script>")
            await check(alice, console_path("sessions", SID) + f"?q={q}", PAYLOAD[:190])  # shown back
            bob = await person(BOB)
            await check(bob, "/console/inbox", "")
            await check(bob, "/console/activity", "tb__delete_thing")
            await check(bob, f"/console/activity?tool={q}&session={q}", "")
            await check(bob, "/console/activity", "")
            rows = re.findall(r'href="(/console/activity/[^"]+)"', await bob.content())
            assert rows
            for row in rows:
                await check(bob, row, "<svg/onload=alert(2)>")
            owner = await person(OWNER_TOKEN)
            await check(owner, f"/console/pins/tool?tool={q}", "")
            await check(owner, f"/console/activity?principal={q}", "")
            assert dialogs == []
        finally:
            await browser.close()

