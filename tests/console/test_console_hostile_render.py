"""Hostile data as the console renders it: a call's arguments and a proof are what a client (or a tampered
audit row) made them, so their number is the client's too. Every page stays bounded, and says what it left out
rather than dropping it silently. A real Sentinel over HTTP on 127.0.0.1 (the console rig)."""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil

import httpx2
import pytest

from sentinel_mcp.console.proof_view import proof_nodes
from tests.console.console_rig import (ALICE, BOB, OWNER_TOKEN, console_config, csrf_of, http_sentinel,
                                      items_of, mcp_client, signed_in, text)
from tests.identity.identity_rig import BOOKINGS_PL, console_secret

pytestmark = pytest.mark.timeout(240)
ITEM = re.compile(r'<li class="card item.*?</li>\n', re.S)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    # a call is held while the principal's console is open (the browser test's page), then answered "waiting
    # for the user": rendered the same after 2 s as after the rig's 30 (each of its calls waited that long)
    cfg = console_config(tmp_path_factory.mktemp("console-hostile-render"), hold_seconds=2)
    # the held calls carry argument names the toolbox does not declare (what the page makes of a client's
    # hostile names is the question here): its upstream passes them, so they reach the guard and the inbox
    # instead of the refusal of undeclared arguments (tests/gateway/test_undeclared_arguments.py)
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"]["undeclared_arguments"] = "pass"
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, proc):
        yield base, proc


async def test_a_held_call_of_very_many_arguments_makes_a_bounded_item_that_says_what_it_left_out(sentinel):
    """Before, the inbox listed every argument: a call of 40,000 made a 1.5 MB page, with the argument that
    mattered (``name``, sorted last) 40,000 rows below the question and nothing saying it was there."""
    base, _ = sentinel
    async with signed_in(base, BOB) as bob, mcp_client(base, BOB) as c:
        # hidden characters in 300 names (more would pass the bound on names outside ASCII a call may hold,
        # refused before it is held: tests/gateway/test_look_alike_argument_names.py)
        for n, spelling in ((5_000, "k{:05d}"), (300, "\u202e{}\u200b")):
            args = {spelling.format(i): "x" for i in range(n)}
            args["name"] = "victim"
            first = await c.call_tool("tb__delete_thing", args)
            assert first.is_error and "waiting for the user" in text(first)
            page = await bob.wait_items(1)
            [item] = items_of(page)
            [card] = ITEM.findall(page)
            rows = card.count("<dt>")
            assert 0 < rows <= 200, rows  # bounded, whatever the client sent
            said = re.search(r"(\d+) more arguments? not shown", card)
            assert said is not None, card[-2000:]
            assert rows + int(said.group(1)) == n + 1, (rows, said.group(1))  # the count is exact
            assert len(card) < 300_000, len(card)
            assert "\u202e" not in html.unescape(card)  # a key is shown as what it is, too
            r = await bob.post(f"/console/inbox/{item}", {"decision": "deny"})
            assert r.status_code == 303


def test_a_proof_of_very_many_branches_makes_a_bounded_tree_that_says_it_was_cut():
    """Before, the node budget cut each branch past it into its own "proof cut here" node: a list of a million
    made a million nodes (one page row each)."""

    def count(node) -> int:
        return 1 + sum(count(c) for c in node.children)

    for tree in (
        {"all": [{"fact": f"f({i})"} for i in range(100_000)]},
        [{"goal": f"g({i})", "by": "native"} for i in range(100_000)],
        {f"k{i}": {"all": [{"fact": "x"}] * 50} for i in range(5_000)},
    ):
        root, _ = proof_nodes({"tree": tree})
        assert root is not None
        total = count(root)
        assert total <= 2_100, total
        labels = []
        stack = [root]
        while stack:
            n = stack.pop()
            labels.append(n.label)
            stack.extend(n.children)
        assert any("cut" in label for label in labels)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH = 360
SCRIPTED = (
    "<img src=x onerror=alert(1)><svg/onload=alert(2)></code><script>alert(3)</script>javascript:alert(4)"
)


@pytest.fixture
def playwright_ok():
    pytest.importorskip("playwright.async_api", reason="playwright is a dev dependency (make setup)")
    if CHROMIUM is None:
        pytest.skip("no chromium executable (make test installs Debian's chromium)")


async def test_a_held_calls_hostile_arguments_read_as_they_are_in_a_browser_at_360px(sentinel, playwright_ok):
    """In a real Chromium at a phone's width: no argument runs as markup or script, a direction override or a
    zero-width character is shown as a visible code, and a long unbroken argument name cannot take the page's
    width. Before, one 200-character name made the names' column (``max-content``) 2,400 px wide, the page
    scrolled sideways and every value was squeezed to a character per line (Approve 45,000 px down)."""
    from playwright.async_api import async_playwright

    base, _ = sentinel
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": WIDTH, "height": 800})
            dialogs: list[str] = []
            page.on("dialog", lambda d: dialogs.append(d.message))
            await page.goto(f"{base}/console/login")
            await page.fill("#secret", console_secret(BOB))
            async with page.expect_navigation():
                await page.click("button[type=submit]")
            long_names = ("K" * 200, "/" + "x/" * 150, "\u202e" + "R" * 120)  # unbroken, a path, an override
            for long_name in long_names:
                args = {"name": "report\u202etxt.exe\u200b" + SCRIPTED, long_name: "A" * 900}
                async with mcp_client(base, BOB) as c:
                    first = await c.call_tool("tb__delete_thing", args)
                assert first.is_error and "waiting for the user" in text(first)
                await page.goto(f"{base}/console/inbox")
                await page.wait_for_selector("button.approve")
                shown = await page.inner_text("#inbox-items")
                assert "report⟨U+202E⟩txt.exe⟨U+200B⟩<img src=x onerror=alert(1)>" in shown
                assert "\u202e" not in shown and "\u200b" not in shown
                injected = await page.evaluate(
                    "document.querySelectorAll("
                    "'main img, main svg, main script, main a[href^=javascript]').length"
                )
                assert injected == 0 and dialogs == []
                wide = await page.evaluate("document.documentElement.scrollWidth")
                assert wide <= WIDTH, (long_name[:10], wide)
                # the value beside the long name has the room left (not a character per line)
                value_width = await page.evaluate(
                    "Math.min(...[...document.querySelectorAll('#inbox-items dl.args dd code')]"
                    ".map(e => e.getBoundingClientRect().width))"
                )
                assert value_width >= WIDTH / 3, (long_name[:10], value_width)
                async with page.expect_navigation():
                    await page.click("button.deny")
        finally:
            await browser.close()


async def test_every_console_answer_is_unframeable_unsniffed_uncached_and_its_csp_names_only_self(sentinel):
    """Before, the policy allowed ``data:`` images and media (no console page shows either: an injected
    ``data:`` SVG or tracking image had a way in), and the answers Starlette made itself (an unknown path, a
    wrong method, a static file) carried none of the headers: framable, sniffable, cacheable."""
    base, _ = sentinel
    async with signed_in(base, BOB) as bob:
        csrf = csrf_of(await bob.page("/console/inbox"))
        answers = {
            "login": await bob.http.get(base + "/console/login"),
            "page": await bob.get("/console/inbox"),
            "problem": await bob.post("/console/inbox/nope", {"decision": "deny"}, csrf="0" * 64),
            "unknown path": await bob.get("/console/no-such-page"),
            "wrong method": await bob.http.request("PUT", base + "/console/inbox", headers={"origin": base}),
            "static": await bob.get("/console/static/console.js"),
            "static missing": await bob.get("/console/static/none.js"),
            "live check": await bob.post(
                "/console/policy/check", {"file": "x", "candidate": "a."}, csrf=csrf,
                headers={"x-console-live": "check"},
            ),
        }
    for what, r in answers.items():
        h = r.headers
        csp = h.get("content-security-policy", "")
        assert "frame-ancestors 'none'" in csp and h.get("x-frame-options") == "DENY", (what, dict(h))
        assert h.get("x-content-type-options") == "nosniff" and h.get("cache-control") == "no-store", what
        sources = {s for d in csp.split(";") for s in d.split()[1:]}
        assert sources <= {"'self'", "'none'"}, (what, sources)


TROJAN = (  # a rule's source that reads one way and is another: a direction override inside a comment
    "% allow only admins \u202e }\u2066 ,admin(U) \u2069 {\n",
    "% quiet\u200bly\u2067 skipped \u2069 check\n",
)


async def test_a_rulebase_line_that_reads_otherwise_than_it_is_is_named_on_the_policy_page(tmp_path):
    """The editor shows a rulebase as the browser lays it out: a direction override or an invisible character
    in a file (or a candidate pasted from elsewhere) made the text read otherwise than what Prolog loads, and
    nothing said so. Each such line is a warning naming its line and the characters; other scripts are not."""
    rules = tmp_path / "rules"
    rules.mkdir()
    mine = rules / "bookings.pl"
    original = BOOKINGS_PL.read_text()
    mine.write_text(original + "% café, 日本語, ελληνικά: no warning\n" + "".join(TROJAN))
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["rulebases"] = [
        r if not r.endswith("bookings.pl") else str(mine) for r in body["sentinel"]["rulebases"]
    ]
    cfg.write_text(json.dumps(body))
    first = original.count("\n") + 2  # the two lines after the one in other scripts
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner:
            page = await owner.page("/console/policy")
            checked = page[page.index("<h3>Check</h3>") : page.index('id="candidate"')]
            assert f"bookings.pl:{first}: warning:" in checked and "U+202E" in checked, checked[-3000:]
            assert f"bookings.pl:{first + 1}: warning:" in checked and "U+200B" in checked
            assert f"bookings.pl:{first - 1}:" not in checked  # other scripts are just text
            candidate = "% a\n% b\n" + TROJAN[1]
            r = await owner.post(
                "/console/policy/check", {"file": "bookings.pl", "candidate": original + candidate}
            )
            section = r.text[r.text.index('id="candidate-check"') :]
            line = original.count("\n") + 3
            assert f"line {line}: warning:" in section and "U+2067" in section, section[:2000]
            r = await owner.http.post(
                f"{base}/console/policy/check",
                data={"csrf": csrf_of(page), "file": "bookings.pl", "candidate": original + candidate},
                headers={"origin": base, "x-console-live": "check"},
            )
            found = [p for p in r.json()["problems"] if p["line"] == line]
            assert found and "U+2067" in found[0]["message"] and "\u2067" not in found[0]["message"]


async def test_signing_out_everywhere_ends_every_session_of_that_principal_and_no_one_elses(sentinel):
    """A session cookie copied off one browser (a shared machine, a backup) stayed good for 12 hours whatever
    the person did: signing out ended only the session of the browser it was done in. "Everywhere" ends every
    console session of the principal and their live streams; another principal's stay."""
    base, _ = sentinel
    async with signed_in(base, BOB) as here, signed_in(base, BOB) as there, signed_in(base, ALICE) as alice:
        stolen = dict(there.http.cookies)
        async with there.http.stream("GET", f"{base}/console/events") as stream:
            assert stream.status_code == 200
            page = await here.page("/console/inbox")
            assert 'name="everywhere"' in page
            r = await here.post("/console/logout", {"everywhere": "1"}, csrf=csrf_of(page))
            assert r.status_code == 303 and r.headers["location"] == "/console/login"

            async def drained() -> None:
                async for _ in stream.aiter_bytes():
                    pass

            await asyncio.wait_for(drained(), 30)  # the other browser's live stream ended with it
        for who in (here, there):
            r = await who.get("/console/inbox")
            assert r.status_code == 303 and r.headers["location"] == "/console/login"
        async with httpx2.AsyncClient(timeout=30, cookies=stolen, follow_redirects=False) as thief:
            assert (await thief.get(f"{base}/console/inbox")).status_code == 303
        assert (await alice.get("/console/inbox")).status_code == 200  # another principal's: untouched
    # a plain sign-out still ends only its own session
    async with signed_in(base, BOB) as here, signed_in(base, BOB) as there:
        r = await here.post("/console/logout", {}, csrf=csrf_of(await here.page("/console/inbox")))
        assert r.status_code == 303
        assert (await here.get("/console/inbox")).status_code == 303
        assert (await there.get("/console/inbox")).status_code == 200


async def test_a_typed_out_mark_reads_apart_from_a_real_hidden_character_on_the_inbox_and_activity(sentinel):
    """A client's argument that types Sentinel's marking out (``⟨U+202E⟩``, a look-alike bracket, a fake
    closing) is shown with its brackets marked, in the question and in the arguments listed: only a value
    really holding U+202E shows ``⟨U+202E⟩``, and Sentinel's own marks are never marked twice."""
    base, _ = sentinel
    values = ["victim\u202efdp.exe", "victim⟨U+202E⟩fdp.exe", "victim〈U+202E〉fdp.exe", "victim⟩fdp⟨U+200B"]
    cards = []
    async with signed_in(base, BOB) as bob, mcp_client(base, BOB) as c:
        for value in values:
            first = await c.call_tool("tb__delete_thing", {"name": value})
            assert first.is_error and "waiting for the user" in text(first)
            page = await bob.wait_items(1)
            [item] = items_of(page)
            [card] = ITEM.findall(page)
            cards.append(html.unescape(card))
            r = await bob.post(f"/console/inbox/{item}", {"decision": "deny"})
            assert r.status_code == 303
        activity = await bob.page("/console/activity")
        calls = [html.unescape(await bob.page(f"/console/activity/{key}"))
                 for key in dict.fromkeys(re.findall(r'href="/console/activity/([^"?]+)"', activity))]
    real, *typed = cards
    assert "victim⟨U+202E⟩fdp.exe" in real and "U+27E8" not in real  # marked once, in question and list
    for card in typed:
        assert "⟨U+202E⟩" not in card and "⟨U+200B⟩" not in card, card  # no mark but Sentinel's
        assert "⟨U+27E8⟩" in card or "⟨U+3008⟩" in card, card
        assert "⟨U+27E8⟩U+27E8" not in card, card
    assert "victim⟨U+27E8⟩U+202E⟨U+27E9⟩fdp.exe" in typed[0]
    shown = [c for c in calls if "victim" in c]  # a call's own page lists its arguments too
    real_pages = [c for c in shown if "victim⟨U+202E⟩fdp.exe" in c]
    assert real_pages and not any("U+27E8" in c for c in real_pages)  # the real one's marks: once
    assert len(shown) >= len(values), len(shown)
    assert sum("victim⟨U+202E⟩fdp.exe" in c for c in shown) >= 1
    assert sum("⟨U+27E8⟩U+202E" in c for c in shown) >= 1
    assert not any("⟨U+200B⟩" in c or "⟨U+27E8⟩U+27E8" in c for c in shown)
