"""A confirmation of a call whose argument is most of a megabyte (a call's arguments may be 1,000,000 bytes):
the console shows a bounded question that says, where the person reads it, that it was cut and how much;
what is stored stays bounded; and no yes is taken for it: what it runs past the cut cannot be read, so the
card has no Approve and one sent anyway is refused (``console/approval_arguments.py``; before, the person's
yes to the part shown ran the tail unread). A real Sentinel over HTTP on 127.0.0.1 and a real headless
Chromium."""

from __future__ import annotations

import re
import shutil

import pytest
from tests.console.console_rig import (BOB, console_config, http_sentinel, items_of, mcp_client, signed_in,
                                      text)

pytestmark = pytest.mark.timeout(240)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ITEM = re.compile(r'<li class="card item.*?</li>\n', re.S)


async def test_a_megabyte_confirmation_is_shown_cut_with_a_mark_and_takes_no_yes(tmp_path):
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")
    from playwright.async_api import async_playwright

    from tests.identity.identity_rig import console_secret

    cfg = console_config(tmp_path, hold_seconds=2)
    name = "A" * 900_000 + "-TAIL-ONE"
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, BOB) as bob, mcp_client(base, BOB) as c:
            first = await c.call_tool("tb__delete_thing", {"name": name})
            assert first.is_error and "waiting for the user" in text(first)
            assert len(text(first)) < 20_000  # the client's answer is bounded too
            page = await bob.wait_items(1)
            [card] = ITEM.findall(page)
            assert len(page) < 100_000, len(page)
            assert "TAIL-ONE" not in page  # past the cut
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                view = await browser.new_page()
                await view.goto(f"{base}/console/login")
                await view.fill("#name", "bob")
                await view.fill("#secret", console_secret(BOB))
                async with view.expect_navigation():
                    await view.click("button[type=submit]")
                await view.goto(f"{base}/console/inbox")
                question = await view.inner_text("li.item legend.question")
                await browser.close()
            # the person reads that it was cut, and how much, in the question itself
            cut = re.search(r"…⟨(\d+) more characters not shown⟩", question)
            assert cut is not None, question[-500:]
            assert int(cut.group(1)) > 800_000, cut.group(1)
            assert "cut" in question[cut.end():], question[-300:]
            [item] = items_of(page)
            assert 'value="approve"' not in card and "cannot be approved here" in card
            r = await bob.post(f"/console/inbox/{item}", {"decision": "approve"})  # sent anyway
            assert r.status_code == 409 and "not approved" in r.text, (r.status_code, r.text[-500:])
            # alike up to the cut and far beyond it, another tail: another call, asked as its own
            other = await c.call_tool("tb__delete_thing", {"name": name.replace("TAIL-ONE", "TAIL-TWO")})
            assert other.is_error and "waiting for the user" in text(other), text(other)[:300]
            again = await c.call_tool("tb__delete_thing", {"name": name})
            assert again.is_error, text(again)[:300]  # nothing approved it
    # what was stored of it stays bounded: the audit's rows and the session's facts
    import sqlite3

    dbs = list((tmp_path / "state").rglob("*.db"))
    assert dbs
    for db in dbs:
        con = sqlite3.connect(db)
        try:
            for (table,) in con.execute("select name from sqlite_master where type = 'table'"):
                for col in [r[1] for r in con.execute(f'pragma table_info("{table}")')]:
                    longest = con.execute(f'select max(length("{col}")) from "{table}"').fetchone()[0]
                    assert not isinstance(longest, int) or longest < 200_000, (db.name, table, col, longest)
        finally:
            con.close()
