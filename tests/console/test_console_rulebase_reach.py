"""The console's policy pages show a principal the rulebase only as far as its MCP tools would: one that may
not read ``sentinel://rulebase`` (a ``tools`` list narrower than ``sentinel__*``) sees no version, file, check
or history (its diffs included) of it; one that may read it but reaches only some tools is told only the
check's problems about tools in its reach (or about no tool); the owner and a full-reach principal see every
problem."""

from __future__ import annotations

import html
import json
import re

import pytest
from tests.console.console_rig import (
    BOB, OWNER_TOKEN, console_config, console_secret, http_sentinel, mcp_client, signed_in,
)

pytestmark = pytest.mark.timeout(180)
DAVE = "dave-token-0123456789abcdef00"  # may cancel and ask why not; reads no rulebase
ERIN = "erin-token-0123456789abcdef00"  # may cancel, merge and use every sentinel tool: reads the rulebase
PROBLEM = re.compile(r'<li class="(?:error|warning)">([^<]*)</li>')
VERSION = re.compile(r'<option value="([0-9a-f]{64})"')
# a problem about a tool erin reaches (a binding to a tool that writes), beside default.pl's about tools no
# upstream has (llm__*); checked against her tools, bookings.pl's bindings to reads she does not reach
# (bk__get_booking, bk__list_bookings) would be problems too
EXTRA = (
    "binding(merged(A), tool('bk__merge_bookings', [first = A]), extract([A = '/merged/0']), [ttl(60)]).\n"
)


def _config(tmp_path):
    cfg = console_config(tmp_path)
    (tmp_path / "extra.pl").write_text(EXTRA)
    body = json.loads(cfg.read_text())
    body["sentinel"]["rulebases"].append(str(tmp_path / "extra.pl"))
    body["sentinel"]["principals"] += [
        {"name": "dave", "token": DAVE, "console_secret": console_secret(DAVE),
         "tools": ["bk__cancel_booking", "sentinel__sentinel_why_not"]},
        {"name": "erin", "token": ERIN, "console_secret": console_secret(ERIN),
         "tools": ["bk__cancel_booking", "bk__merge_bookings", "sentinel__*"]},
    ]
    cfg.write_text(json.dumps(body))
    return cfg


async def _reads_rulebase_over_mcp(base: str, token: str) -> bool:
    async with mcp_client(base, token) as c:
        try:
            read = await c.read_resource("sentinel://rulebase")
        except Exception:  # noqa: BLE001 (the SDK's error for an unknown resource)
            return False
        return "bookings.pl" in str(read)


async def test_the_policy_pages_show_the_rulebase_as_far_as_the_principals_tools_read_it(tmp_path):
    with http_sentinel(_config(tmp_path)) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner:
            everything = PROBLEM.findall(html.unescape(await owner.page("/console/policy")))
            versions = VERSION.findall(await owner.page("/console/policy/history"))
        assert any("llm__llm_generate, which no upstream has" in p for p in everything), everything
        assert any("bk__merge_bookings, which is not read-only" in p for p in everything), everything
        assert versions
        diff = f"/console/policy/history?a={versions[0]}&b={versions[0]}"

        # bob reaches every tool: the owner's look
        assert await _reads_rulebase_over_mcp(base, BOB)
        async with signed_in(base, BOB) as bob:
            assert PROBLEM.findall(html.unescape(await bob.page("/console/policy"))) == everything
            assert (await bob.get(diff)).status_code == 200

        # erin reads the rulebase; of the check, only what is about tools in her reach
        assert await _reads_rulebase_over_mcp(base, ERIN)
        async with signed_in(base, ERIN) as erin:
            page = html.unescape(await erin.page("/console/policy"))
            told = PROBLEM.findall(page)
            assert told and all("bk__merge_bookings" in p for p in told), told
            assert "bk__get_booking" not in page and "llm__" not in page and "bk__list_bookings" not in page
            assert (await erin.get("/console/policy/history")).status_code == 200
            assert (await erin.get(diff)).status_code == 200

        # dave cannot read sentinel://rulebase: no version, file, check, history or diff of it here either
        assert not await _reads_rulebase_over_mcp(base, DAVE)
        async with signed_in(base, DAVE) as dave:
            page = html.unescape(await dave.page("/console/policy"))
            assert 'id="rulebase-out-of-reach"' in page, page
            assert not PROBLEM.findall(page) and "bookings.pl" not in page and versions[0] not in page
            for path in ("/console/policy/history", diff):
                r = await dave.get(path)
                told = html.unescape(r.text)
                assert r.status_code == 403 and "outside your reach" in told, (path, r.status_code)
                assert "bookings.pl" not in r.text and "binding(" not in html.unescape(r.text)


ROW_LINK = re.compile(r'href="/console/activity/([^"?#]+)"')


async def test_the_activity_of_a_principal_that_may_not_read_the_rulebase_shows_no_version(tmp_path):
    """Dave's own calls' rows (the list and each row's page: the audit row's policy version, the proof's
    version, a reason) never show the version; erin, who may read the rulebase, sees it in hers."""
    with http_sentinel(_config(tmp_path)) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner:
            version = VERSION.findall(await owner.page("/console/policy/history"))[0]
        for token in (DAVE, ERIN):
            async with mcp_client(base, token) as c:
                await c.call_tool("sentinel__sentinel_why_not",
                                  {"tool": "bk__cancel_booking", "arguments": {"booking_id": "BK-789"}})
                await c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
        async with signed_in(base, ERIN) as erin:
            rows = ROW_LINK.findall(await erin.page("/console/activity"))
            assert rows
            assert any([version in await erin.page(f"/console/activity/{r}") for r in rows])
        async with signed_in(base, DAVE) as dave:
            listing = await dave.page("/console/activity")
            rows = ROW_LINK.findall(listing)
            assert len(rows) >= 2 and version not in listing
            for r in rows:
                assert version not in await dave.page(f"/console/activity/{r}"), r
