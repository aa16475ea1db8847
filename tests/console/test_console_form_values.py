"""What a browser sends back of what a console form names: an upstream form's field names and choices on
the inbox page (the form is outside input: its property names are any text), a consent's kind and purpose
(the client states the purpose) and a fact on their Revoke buttons. A browser does not send a field's name or
value as the page wrote it: it turns a NUL into U+FFFD (the HTML parser) and a lone CR or LF into CRLF (the
form's encoding). So the console read the person's ticked box "keep<LF>backups" as unticked (false, as if
the person said no) and a required field as missing, took a pick of one choice as another, and revoked no
consent of a purpose with a line break. A field is named on the page by a plain word (the property's own
name when it is one, otherwise its position); a value the browser would change goes as its position or
digest (``console.form_values``)."""

from __future__ import annotations

import asyncio
import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from tests.console.console_rig import (ALICE, console_config, http_sentinel, items_of, mcp_client, signed_in,
                                      text)
from tests.conftest import stop_process
from tests.console.test_console_browser import CHROMIUM
from tests.identity.identity_rig import console_secret, env_for

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]
HOSTILE = Path(__file__).resolve().parent / "hostile_form_server.py"
PLAIN_NAME = re.compile(r"q[0-9]+\.[A-Za-z0-9_.#-]+")
ODD_PURPOSES = ["trip\nx", "trip\r\nx", "#plain", "tab\there"]
ODD_NAMES = ["keep\nbackups", "note\r", "x\x00y", "tab\there", "sp ace", "q0.ok", "#0", "é"]


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("form-values"))
    body = json.loads(cfg.read_text())
    body["mcpServers"]["hx"] = {"command": sys.executable, "args": [str(HOSTILE)]}
    cfg.write_text(json.dumps(body))
    # as a client stated them when the person allowed its reads for good: the first grant makes the store,
    # the others are made at once (each a process of its own, most of its time Python starting)
    def grant(purpose: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "consent", "grant", "alice", "bookings",
             "--purpose", purpose],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(cfg),
        )

    for batch in (ODD_PURPOSES[:1], ODD_PURPOSES[1:]):
        procs = [grant(purpose) for purpose in batch]
        try:
            for proc in procs:
                out, err = proc.communicate(timeout=60)
                assert proc.returncode == 0, out + err
        finally:
            for proc in procs:
                stop_process(proc)
    with http_sentinel(cfg) as (base, _proc):
        yield base


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chromium():
    """One Chromium for the module's browser tests (each in a context of its own: its own sign-in)."""
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            await browser.close()


def _names(page: str, item: str) -> list[str]:
    start = page.index(f'action="/console/inbox/{html.escape(item, quote=True)}"')
    form = page[start : page.index("</form>", start)]
    return [html.unescape(n) for n in re.findall(r'name="(q[^"]*)"', form)]


async def test_a_field_named_any_text_reads_back_as_the_person_answered_it(sentinel):
    base = sentinel
    props: dict[str, object] = {"ok": {"type": "boolean"}}
    props.update({name: {"type": "boolean"} for name in ODD_NAMES[:1]})
    props.update({name: {"type": "string"} for name in ODD_NAMES[1:]})
    schema = {"type": "object", "properties": props, "required": ["ok", *ODD_NAMES[1:]]}
    async with signed_in(base, ALICE) as person, mcp_client(base, ALICE) as client:
        call = asyncio.create_task(
            client.call_tool("hx__ask_raw", {"schema": json.dumps(schema), "message": "keep the backups?"})
        )
        page = await person.wait_items(1)
        (item,) = items_of(page)
        names = _names(page, item)
        assert len(names) == len(ODD_NAMES) and all(PLAIN_NAME.fullmatch(n) for n in names), names
        # as a browser sends them: a ticked box "on", each text field its own value
        form = {names[0]: "on", **{n: f"v{i}" for i, n in enumerate(names[1:], 1)}}
        r = await person.post(f"/console/inbox/{item}", {"decision": "approve", **form})
        assert r.status_code == 303, r.text[:500]
        result = text(await asyncio.wait_for(call, 60))
        content = json.loads(result.split(":", 2)[2])
        texts = {n: f"v{i}" for i, n in enumerate(ODD_NAMES[1:], 1)}
        assert content == {"ok": True, ODD_NAMES[0]: True, **texts}, content


async def test_in_a_browser_a_ticked_box_of_any_name_is_read_as_ticked(sentinel, chromium):
    """In Chromium: the person ticks "keep<LF>backups", types into "x<NUL>y", picks "a<LF>b", then approves.
    Before, the browser sent the names as "keep<CR><LF>backups" and "x<U+FFFD>y": the box was read as
    unticked and the text as not given, so the upstream was told the person said no to keeping the backups;
    and the pick of "a<LF>b" came back as "a<CR><LF>b", the other choice."""
    base = sentinel
    schema = {"type": "object", "required": ["ok"], "properties": {
        "ok": {"type": "boolean"}, "keep\nbackups": {"type": "boolean", "title": "Keep the backups"},
        "x\x00y": {"type": "string", "title": "Note"},
        "pick": {"type": "string", "enum": ["a\r\nb", "a\nb", "x\x00y", "#1", ""]}}}
    async with mcp_client(base, ALICE) as client:
        call = asyncio.create_task(
            client.call_tool("hx__ask_raw", {"schema": json.dumps(schema), "message": "clean up?"})
        )
        context = await chromium.new_context()
        try:
            page = await context.new_page()
            await page.goto(f"{base}/console/login")
            await page.fill("#secret", console_secret(ALICE))
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            form = page.locator("form[action^='/console/inbox/']")
            for _ in range(300):
                if await form.count():
                    break
                await asyncio.sleep(0.1)
                await page.goto(f"{base}/console/inbox")
            await form.locator("input[type=checkbox]").check()
            await form.locator("input[type=text]").fill("v")
            answers = []
            for index in range(5):  # each choice, as the person picks it (the last pick is the one sent)
                await form.locator("select").select_option(index=index + 1)  # after the empty "none" option
                answers.append(await form.locator("select").input_value())
            await form.locator("select").select_option(index=2)  # "a\nb"
            async with page.expect_navigation():
                await form.locator("button[value=approve]").click()
        finally:
            await context.close()
        result = text(await asyncio.wait_for(call, 60))
        content = json.loads(result.split(":", 2)[2])
        assert content == {"ok": True, "keep\nbackups": True, "x\x00y": "v", "pick": "a\nb"}, content
        assert len(set(answers)) == 5, answers  # five choices, five values the browser sends apart


async def test_in_a_browser_revoke_ends_the_consent_of_any_purpose_pressed(sentinel, chromium):
    """In Chromium: each Revoke button of a consent whose purpose holds a line break, a CRLF, a tab or a
    leading "#" ends exactly that consent. Before, "trip<LF>x" came back as "trip<CR><LF>x", which is another
    purpose: nothing was revoked, and pressing the button for "trip<LF>x" ended "trip<CR><LF>x" instead."""
    from sentinel_mcp.console.web import shown

    base = sentinel
    context = await chromium.new_context()
    try:
        page = await context.new_page()
        await page.goto(f"{base}/console/login")
        await page.fill("#secret", console_secret(ALICE))
        async with page.expect_navigation():
            await page.click("button[type=submit]")
        consents = page.locator("li").filter(has=page.locator("form[action='/console/consents/revoke']"))

        async def rows_of(purpose: str) -> Any:  # the row that shows this purpose (as marked)
            return consents.filter(has_text=f"for {shown(purpose)} ")

        for at, purpose in enumerate(ODD_PURPOSES):
            await page.goto(f"{base}/console/consents")
            row = await rows_of(purpose)
            assert await row.count() == 1, purpose
            async with page.expect_navigation():
                await row.locator("button").click()
            assert await (await rows_of(purpose)).count() == 0, f"{purpose!r} is still granted"
            for other in ODD_PURPOSES[at + 1 :]:
                assert await (await rows_of(other)).count() == 1, f"{other!r} went with {purpose!r}"
    finally:
        await context.close()
