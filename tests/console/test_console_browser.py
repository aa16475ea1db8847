"""The console in a real headless Chromium (Debian's ``chromium``, driven by Playwright for Python): sign in,
approve a held call from the inbox and see the tool run, deny one, open a proof, revoke a fact, and run a
what-if replay that flips a decision; at 360 px wide. Screenshots of each page go to docs/console/
(with SENTINEL_SCREENSHOTS=1)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from tests.console.console_rig import (
    console_secret,
    ALICE,
    OWNER_TOKEN,
    console_config,
    grant_consent,
    http_sentinel,
    mcp_client,
    text,
)

pytestmark = pytest.mark.timeout(180)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# the README's screenshots are refreshed on request only (SENTINEL_SCREENSHOTS=1), so a test run leaves the
# tree clean
DOC_SHOTS = Path(__file__).resolve().parents[2] / "docs" / "console"
FLIP = ("booking_status(B, confirmed)", "booking_status(B, pending)")


@pytest.fixture
def browser_page():
    playwright = pytest.importorskip(
        "playwright.sync_api", reason="playwright is a dev dependency (make setup)"
    )
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")
    return playwright


async def goto(page, url: str) -> None:
    """``page.goto``, again when the inbox's live stream reloaded the page at that moment (a user's click
    would race the same way; the page itself is fine)."""
    from playwright.async_api import Error as PlaywrightError

    for attempt in range(3):
        try:
            await page.goto(url)
            return
        except PlaywrightError as e:
            if "interrupted by another navigation" not in str(e) or attempt == 2:
                raise
            await page.wait_for_load_state()


async def test_inbox_activity_sessions_and_whatif_in_a_browser(tmp_path, browser_page):
    from playwright.async_api import async_playwright

    shots = DOC_SHOTS if os.environ.get("SENTINEL_SCREENSHOTS") == "1" else tmp_path / "shots"
    shots.mkdir(parents=True, exist_ok=True)
    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        grant_consent(cfg, "alice", "bookings")  # her proof rests on her bookings' reads: hers to see
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = await browser.new_page(viewport={"width": 360, "height": 800})

            async def shot(name: str) -> None:
                await page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

            await page.goto(f"{base}/console/")
            assert page.url.endswith("/console/login")
            await shot("login")
            await page.fill("#secret", console_secret(ALICE))
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            assert page.url.endswith("/console/inbox"), (page.url, await page.content())
            # the inbox page is open (its live stream): a non-eliciting client's call is held for the answer
            await page.wait_for_function("document.getElementById('inbox-count') !== null")
            await asyncio.sleep(0.5)
            async with mcp_client(base, ALICE) as client:
                call = asyncio.create_task(client.call_tool("bk__cancel_booking", {"booking_id": "BK-789"}))
                await page.wait_for_selector("li.item", timeout=30_000)  # live update reloads the inbox
                assert "Why do you want to cancel BK-789?" in await page.inner_text("li.item")
                await shot("inbox")
                await page.select_option("li.item select", "health")
                await page.click("li.item button.approve")
                # then the confirmation that lists what was established, in its own round (a loaded machine
                # may take several looks before that round is posted)
                for _ in range(10):
                    done, _pending = await asyncio.wait({call}, timeout=3)
                    if done:
                        break
                    # the new round may have come during the redirect
                    await goto(page, f"{base}/console/inbox")
                    await page.wait_for_selector("li.item", timeout=30_000)
                    for box in await page.locator("li.item input[type=checkbox]").all():
                        await box.check()
                    await page.click("li.item button.approve")
                result = await asyncio.wait_for(call, 60)
                assert not result.is_error and "cancelled" in text(result)  # the tool ran
                await page.wait_for_selector("#inbox-empty")

                call = asyncio.create_task(
                    client.call_tool("bk__merge_bookings", {"first": "BK-456", "second": "BK-111"})
                )
                await page.wait_for_selector("li.item", timeout=30_000)
                await page.click("li.item button.deny")
                result = await asyncio.wait_for(call, 60)
                assert result.is_error and "declined" in text(result)

            # activity -> the approved call's proof, as a tree
            await goto(page, f"{base}/console/activity?tool=cancel&decision=allow")
            await shot("activity")
            await page.click("table.activity tbody tr a")
            await page.wait_for_selector("#proof-tree")
            tree = await page.inner_text("#proof-tree")
            assert "cancel_reason('BK-789',health)" in tree and "provenance: user" in tree
            await shot("proof")

            # sessions -> revoke the answer
            await goto(page, f"{base}/console/sessions")
            await page.click("ul.sessions a")
            row = page.locator("table.facts tr", has_text="cancel_reason")
            assert await row.count() == 1
            await shot("session")
            await row.locator("button").click()
            await page.wait_for_load_state()
            assert await page.locator("table.facts tr", has_text="cancel_reason").count() == 0

            # policy -> what-if (the owner's: a candidate runs in Sentinel's engine): a candidate that lets
            # only pending bookings be cancelled flips alice's recorded allow
            await goto(page, f"{base}/console/policy?file=bookings.pl")
            assert await page.locator("#owner-only").count() == 1  # alice sees no editor
            page = await (await browser.new_context(viewport={"width": 360, "height": 800})).new_page()
            await page.goto(f"{base}/console/login")
            await page.fill("#secret", console_secret(OWNER_TOKEN))
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            await goto(page, f"{base}/console/policy?file=bookings.pl")
            candidate = (await page.input_value("#candidate-text")).replace(*FLIP)
            await page.fill("#candidate-text", candidate)
            await page.click("#run-whatif")
            await page.wait_for_selector("#whatif-report")
            assert int(await page.inner_text("#change-count")) >= 1
            assert "bk__cancel_booking" in await page.inner_text("#whatif-report")
            await shot("whatif")
            await page.set_viewport_size({"width": 1100, "height": 800})
            await goto(page, f"{base}/console/upstreams")
            await shot("upstreams")
            await browser.close()
