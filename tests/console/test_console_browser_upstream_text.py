"""What an upstream wrote (a held tool's name, its description, its ``_meta`` keys and values) is text on
every console page that shows it, in a real headless Chromium: no element, attribute, dialog or link comes
from it, and the page still shows it. The held definition is planted in the pins file as the gateway holds
one (``ToolPins.check``), before Sentinel starts."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

import pytest
from mcp.types import Tool

from sentinel_mcp.config import load_config
from sentinel_mcp.gateway.tool_pins import FILE_NAME, ToolPins
from tests.console.console_rig import OWNER_TOKEN, console_config, console_secret, http_sentinel
from tests.console.test_console_browser import CHROMIUM
from tests.console.test_console_browser_hostile import INJECTED, PAYLOAD

pytestmark = pytest.mark.timeout(240)
IDENTITY = "tb__" + PAYLOAD[:150]


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")
    cfg = console_config(tmp_path_factory.mktemp("console-browser-upstream"))
    pins = ToolPins(load_config(cfg).data_dir / FILE_NAME)
    first = {"name": "x", "description": "lists", "inputSchema": {"type": "object"}}
    assert pins.check({IDENTITY: Tool.model_validate(first)}) == {}
    hostile = {**first, "description": PAYLOAD + "\u202e\x1b[2J", "title": PAYLOAD,
               "_meta": {PAYLOAD[:60]: PAYLOAD}}
    assert list(pins.check({IDENTITY: Tool.model_validate(hostile)})) == [IDENTITY]
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def test_an_upstreams_text_is_never_markup_in_a_browser(sentinel):
    from playwright.async_api import async_playwright

    base = sentinel
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            dialogs: list[str] = []
            page: Any = await (await browser.new_context()).new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), asyncio.ensure_future(d.dismiss())))
            await page.goto(f"{base}/console/login")
            await page.fill("#secret", console_secret(OWNER_TOKEN))
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            one = "/console/pins/tool?tool=" + quote(IDENTITY, safe="")
            for path, must_show in (("/console/pins", "<img src=x onerror=alert(1)>"),
                                    (one, "<script>alert(3)"), ("/console/upstreams", "")):
                r = await page.goto(base + path)
                assert r.status == 200, (path, r.status)
                await page.wait_for_load_state("load")
                assert await page.evaluate(INJECTED) == [], path
                assert await page.is_visible("main"), path
                assert must_show in await page.inner_text("main"), path
            assert dialogs == []
        finally:
            await browser.close()
