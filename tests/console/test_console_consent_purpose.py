"""The consents page shows one row per kind and purpose, and its Revoke ends that row only: it posted the kind
alone and every purpose of the kind was revoked. The form posts kind and purpose; a purpose that is absent,
empty, given twice, past its bound or another principal's revokes nothing. A real Sentinel over HTTP on
127.0.0.1 (the console rig) and the real ``consent`` command."""

from __future__ import annotations

import html
import re
import subprocess
import sys

import pytest

from sentinel_mcp.console import system_pages
from tests.console.console_rig import ALICE, BOB, console_config, env_for, http_sentinel, signed_in

pytestmark = pytest.mark.timeout(180)
SLASHED = "trip/../weather"
LONG = "p" * (getattr(system_pages, "MAX_PURPOSE", 200) + 1)


def grant(cfg, principal: str, kind: str, purpose: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "consent", "grant", principal, kind,
         "--purpose", purpose],
        capture_output=True, text=True, timeout=60, env=env_for(cfg),
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console-consent-purpose"))
    for purpose in ("weather", "trip", SLASHED, "*", LONG):
        grant(cfg, "alice", "bookings", purpose)
    grant(cfg, "bob", "bookings", "weather")
    grant(cfg, "bob", "bookings", "bobs own")
    with http_sentinel(cfg) as (base, _proc):
        yield base


def rows(page: str) -> set[tuple[str, str]]:
    row = r'name="kind" value="([^"]*)"><input type="hidden" name="purpose" value="([^"]*)"'
    found = re.findall(row, page)
    return {(html.unescape(k), html.unescape(p)) for k, p in found}


async def test_revoke_ends_the_purpose_pressed_and_keeps_the_others(sentinel):
    async with signed_in(sentinel, ALICE) as alice:
        before = rows(await alice.page("/console/consents"))
        assert {("bookings", p) for p in ("weather", "trip", SLASHED, "*")} <= before, before
        r = await alice.post("/console/consents/revoke", {"kind": "bookings", "purpose": "trip"})
        assert r.status_code == 303, r.text[:500]
        assert rows(await alice.page("/console/consents")) == before - {("bookings", "trip")}
        # a purpose with "/" is its exact text: "trip/.." is not "trip", nor the other way round
        r = await alice.post("/console/consents/revoke", {"kind": "bookings", "purpose": SLASHED})
        assert r.status_code == 303
        # "*" is the row that says any purpose, not a pattern for every row
        r = await alice.post("/console/consents/revoke", {"kind": "bookings", "purpose": "*"})
        assert r.status_code == 303
        assert rows(await alice.page("/console/consents")) == {("bookings", "weather")}


@pytest.mark.parametrize("form", [
    {"kind": "bookings"},                                     # no purpose: not "every purpose"
    {"kind": "bookings", "purpose": ""},
    {"kind": "bookings", "purpose": ["weather", "trip"]},     # given twice: neither is taken
    {"kind": "bookings", "purpose": LONG},                    # past the bound: refused, never cut
    {"kind": "bookings", "purpose": LONG + "x" * 5000},
    {"purpose": "weather"},
    {"kind": "", "purpose": "weather"},
])
async def test_a_purpose_absent_empty_twice_or_too_long_revokes_nothing(sentinel, form):
    async with signed_in(sentinel, BOB) as bob:
        before = rows(await bob.page("/console/consents"))
        assert ("bookings", "weather") in before
        r = await bob.post("/console/consents/revoke", form)
        assert r.status_code == 400 and "refused" in r.text, (r.status_code, r.text[:500])
        assert rows(await bob.page("/console/consents")) == before


async def test_a_purpose_past_the_bound_is_sent_to_the_command_line(sentinel):
    async with signed_in(sentinel, ALICE) as alice:
        page = await alice.page("/console/consents")
        assert all(p != LONG for _k, p in rows(page)) and "consent revoke --purpose" in page


async def test_a_principal_cannot_revoke_another_principals_consent(sentinel):
    async with signed_in(sentinel, ALICE) as alice:
        # alice names bob's row: the principal is the signed-in one, so it is a row alice does not have
        r = await alice.post("/console/consents/revoke", {"kind": "bookings", "purpose": "bobs own",
                                                          "principal": "bob"})
        assert r.status_code == 303
    async with signed_in(sentinel, BOB) as bob:
        assert ("bookings", "bobs own") in rows(await bob.page("/console/consents"))
