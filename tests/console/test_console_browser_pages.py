"""The newer console pages in a real headless Chromium at 360 px, keyboard only: the policy editor's live
check
(as the person types) and its plain Check button, the version history and its diff, the Builds page and a
build; no page scrolls sideways. Screenshots go to docs/console/ with SENTINEL_SCREENSHOTS=1."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from tests.console.console_rig import ALICE, OWNER_TOKEN, console_config, console_secret, http_sentinel
from tests.console.test_console_browser import CHROMIUM, DOC_SHOTS
from tests.console.test_console_builds import ALICE_TASK, seed
from tests.identity.identity_rig import BOOKINGS_PL

pytestmark = pytest.mark.timeout(180)

OVERFLOWING = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > 362 && ![...e.children].some(
    c => c.getBoundingClientRect().right > 362))
  .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className + ': ' + e.textContent.slice(0, 120))"""


@pytest.fixture
def playwright_ok():
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")


async def test_policy_editor_history_and_builds_at_360px_by_keyboard(tmp_path, playwright_ok):
    from playwright.async_api import async_playwright

    shots = DOC_SHOTS if os.environ.get("SENTINEL_SCREENSHOTS") == "1" else tmp_path / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["builtins"] = [*body["sentinel"]["builtins"], "swarm"]
    # a rulebase that starts with blank lines: an HTML parser drops a textarea's first newline
    shown = tmp_path / "bookings.pl"
    shown.write_text("\n\n" + BOOKINGS_PL.read_text())
    rulebases = body["sentinel"]["rulebases"]
    body["sentinel"]["rulebases"] = [str(shown) if r == str(BOOKINGS_PL) else r for r in rulebases]
    cfg.write_text(json.dumps(body))
    await seed(tmp_path / "state" / "swarm")
    with http_sentinel(cfg) as (base, _):
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = await browser.new_page(viewport={"width": 360, "height": 800})

            async def no_sideways_scroll() -> None:
                width = await page.evaluate("document.scrollingElement.scrollWidth")
                # name what sticks out, so a failure says which element and text to fix
                wide = await page.evaluate(OVERFLOWING)
                assert width <= 362, (page.url, width, wide)

            # sign in with the keyboard only
            await page.goto(f"{base}/console/login")
            await page.keyboard.press("Tab")  # skip link, then the secret field
            await page.focus("#secret")
            await page.keyboard.type(console_secret(ALICE))
            async with page.expect_navigation():
                await page.keyboard.press("Enter")
            assert page.url.endswith("/console/inbox")

            # the editor (the owner's alone: a candidate runs in Sentinel's engine): alice has none
            await page.goto(f"{base}/console/policy?file=bookings.pl")
            assert await page.locator("#owner-only").count() == 1
            alice_page = page
            page = await (await browser.new_context(viewport={"width": 360, "height": 800})).new_page()
            await page.goto(f"{base}/console/login")
            await page.focus("#secret")
            await page.keyboard.type(console_secret(OWNER_TOKEN))
            async with page.expect_navigation():
                await page.keyboard.press("Enter")
            # a live check while typing, shown as text
            await page.goto(f"{base}/console/policy?file=bookings.pl")
            assert await page.input_value("#candidate-text") == shown.read_text()  # every line, the first too
            await page.focus("#candidate-text")
            await page.keyboard.press("End")
            await page.keyboard.press("Control+End")
            await page.keyboard.type("\nguard(x, (\n% <img src=x onerror=alert(1)>")
            for _ in range(300):  # the check answers after a short pause in typing
                if "error" in await page.inner_text("#live-check"):
                    break
                await asyncio.sleep(0.1)
            assert "error" in await page.inner_text("#live-check")
            assert await page.locator("#live-check img").count() == 0  # text, never markup
            await no_sideways_scroll()
            await page.screenshot(path=str(shots / "policy-check.png"), full_page=True)
            # the Check button, reached and pressed with the keyboard (works without the script too)
            await page.focus("#run-check")
            async with page.expect_navigation():
                await page.keyboard.press("Enter")
            assert "error" in await page.inner_text("#candidate-check")
            page = alice_page

            # history: the start-up load, a diff between two versions (the same one here: no change)
            await page.goto(f"{base}/console/policy/history")
            assert "start-up" in await page.inner_text("table.versions")
            await page.focus("#show-diff")
            async with page.expect_navigation():
                await page.keyboard.press("Enter")
            await page.wait_for_selector("#version-diff")
            await no_sideways_scroll()
            await page.screenshot(path=str(shots / "policy-history.png"), full_page=True)

            # builds: the list and one build, links followed with the keyboard
            await page.goto(f"{base}/console/builds")
            await no_sideways_scroll()
            await page.screenshot(path=str(shots / "builds.png"), full_page=True)
            await page.focus(f"a[href='/console/builds/{ALICE_TASK}']")
            async with page.expect_navigation():
                await page.keyboard.press("Enter")
            assert await page.inner_text("#build-progress") == "2 / 3"
            await no_sideways_scroll()
            await page.screenshot(path=str(shots / "build.png"), full_page=True)

            # activity with its latency split and chain status, readable at 360 px too
            await page.goto(f"{base}/console/activity")
            await no_sideways_scroll()
            await browser.close()
    assert Path(shots / "build.png").exists()
