"""The Activity page's row keys tell a principal nothing of another's calls.

A row was addressed by its audit row id (``main.17``) and the proof page was titled ``Call #17``: ids are
one sequence for every principal, so bob's rows ``main.17`` and ``main.25`` told him that seven rows of
others were written between his two calls, the count /metrics no longer shows him. A principal other than
the owner now addresses its rows by the call's decision id (random), and an id-shaped key (its own row's
included: probing ``main.1``... would find which ids are its own) is a row it does not have. The owner keeps
``chain.id`` (it reads every principal's rows, and the CLI's ``audit`` speaks in ids).

One real Sentinel over HTTP (the console rig: bookings and toolbox servers, alice, bob and the owner), the
real MCP client in both protocol eras for the calls, signed-in browsers (cookie sessions) for the pages."""

from __future__ import annotations

import re

import pytest

from tests.console.console_rig import OWNER_TOKEN, console_config, mcp_client, signed_in
from tests.identity.identity_rig import ALICE, BOB, http_sentinel

pytestmark = pytest.mark.timeout(240)

LINK = re.compile(r'href="/console/activity/([^"?]+)"')
OWNER_KEY = re.compile(r"[A-Za-z0-9_.-]+\.(\d+)")


async def _calls(base: str, token: str, mode: str, n: int) -> None:
    async with mcp_client(base, token, mode) as client:
        for _ in range(n):
            await client.call_tool("bk__list_bookings", {"user_id": "u_123"})


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_principals_row_keys_count_no_other_principals_rows(tmp_path, mode):
    with http_sentinel(console_config(tmp_path)) as (base, _):
        await _calls(base, BOB, mode, 1)
        await _calls(base, ALICE, mode, 3)  # between bob's two calls
        await _calls(base, BOB, mode, 1)
        async with signed_in(base, BOB) as bob, signed_in(base, ALICE) as alice, \
                signed_in(base, OWNER_TOKEN) as owner:
            mine = LINK.findall(await bob.page("/console/activity"))
            hers = LINK.findall(await alice.page("/console/activity"))
            everyone = LINK.findall(await owner.page("/console/activity"))
            assert len(mine) == 2 and len(hers) == 3, (mine, hers)
            # the owner's view keeps chain.id: the ids of bob's rows, which bob must not learn
            ids = sorted(int(OWNER_KEY.fullmatch(k).group(1)) for k in everyone if OWNER_KEY.fullmatch(k))
            assert len(ids) >= 5, everyone
            for key in mine:
                assert re.fullmatch(r"[0-9a-f]{32}", key), key  # nothing of a sequence in it
                page = await bob.page(f"/console/activity/{key}")
                assert "bk__list_bookings" in page
                assert not re.search(r"Call #\d|main\.\d|broken at row", page), page[:2000]
            listing = await bob.page("/console/activity")
            assert not re.search(r"main\.\d|#\d+\b", listing), listing[:2000]

            # probes: the owner's keys (bob's rows' own ids among them), alice's keys, and spellings of his
            # own key all answer as a key nobody has
            nobody = await bob.get("/console/activity/" + "0" * 32)
            assert nobody.status_code == 404

            def same(r, probe: str) -> bool:
                return (r.status_code, r.text.replace(probe, "<k>")) == (
                    nobody.status_code, nobody.text.replace("0" * 32, "<k>"))

            for probe in [*everyone, *hers]:  # real keys, of the owner's view and of alice's rows
                r = await bob.get(f"/console/activity/{probe}")
                assert same(r, probe), (probe, r.status_code, r.text[:500])
            own = mine[0]
            spellings = [own.upper(), f"%20{own}", f"{own}%20", f"{own}%00", own[:-1], f"{own}0",
                         f"main.{own}", f"main.{ids[0]}", "main.-1", "main.99999999999999999999",
                         "main.%EF%BC%91",
                         own.replace("a", "\u0430"), f"{own}%E2%80%8B"]
            for probe in spellings:  # refused (a control character in the path) or a key nobody has
                r = await bob.get(f"/console/activity/{probe}")
                assert r.status_code in (400, 404), (probe, r.status_code)
                assert "bk__list_bookings" not in r.text, probe
            # the owner reads every row by its id, bob's too
            assert (await owner.get(f"/console/activity/{everyone[0]}")).status_code == 200
