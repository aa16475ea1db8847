"""A value the console bounds is refused past its bound (400, nothing done), never cut: revoking a consent cut
its ``kind`` at 100 characters, so a longer kind revoked the consent whose kind is its first 100 characters
(another consent) or none; a filter cut at its bound showed another filter's rows. A real Sentinel over HTTP
on 127.0.0.1 (the console rig)."""

from __future__ import annotations

import html

import pytest

from sentinel_mcp.console import system_pages
from tests.console.console_rig import ALICE, console_config, grant_consent, http_sentinel, signed_in

pytestmark = pytest.mark.timeout(180)
MAX_KIND = getattr(system_pages, "MAX_KIND", 100)
AT_BOUND = "k" * MAX_KIND
PAST_BOUND = AT_BOUND + "k"


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("console-refused-fields"))
    for kind in (AT_BOUND, PAST_BOUND, "bookings"):
        grant_consent(cfg, "alice", kind)
    with http_sentinel(cfg) as (base, _proc):
        yield base


def kinds_listed(page: str) -> set[str]:
    import re

    return {html.unescape(k) for k in re.findall(r'name="kind" value="([^"]*)"', page)}


async def test_a_consent_kind_past_the_bound_is_refused_and_revokes_nothing(sentinel):
    async with signed_in(sentinel, ALICE) as alice:
        assert {AT_BOUND, "bookings"} <= kinds_listed(await alice.page("/console/consents"))
        for kind in (PAST_BOUND, AT_BOUND + "x" * 5000):
            r = await alice.post("/console/consents/revoke", {"kind": kind})
            assert r.status_code == 400, (len(kind), r.status_code)
            assert "refused" in r.text and str(MAX_KIND) in r.text, r.text[:800]
        listed = kinds_listed(await alice.page("/console/consents"))
        assert AT_BOUND in listed and "bookings" in listed, listed  # nothing was revoked
        # the kind past the bound has no form the console would refuse: it says where to revoke it instead
        assert PAST_BOUND not in listed
        assert "sentinel-mcp consent revoke" in await alice.page("/console/consents")
        # a kind within the bound is revoked, that one only
        r = await alice.post("/console/consents/revoke", {"kind": AT_BOUND, "purpose": "*"})
        assert r.status_code == 303, r.text[:500]
        assert AT_BOUND not in kinds_listed(await alice.page("/console/consents"))
        assert "bookings" in kinds_listed(await alice.page("/console/consents"))


async def test_a_filter_past_its_bound_is_refused_not_cut(sentinel):
    async with signed_in(sentinel, ALICE) as alice:
        for path, field, bound in (
            ("/console/activity", "session", 200),
            ("/console/activity", "tool", 200),
            ("/console/sessions/alice/x", "q", 200),
        ):
            ok = await alice.get(path, params={field: "a" * bound})
            assert ok.status_code in (200, 404), (path, field, ok.status_code)
            r = await alice.get(path, params={field: "a" * (bound + 1)})
            assert r.status_code == 400, (path, field, r.status_code)
            assert "refused" in r.text, r.text[:500]
