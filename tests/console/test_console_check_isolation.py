"""A candidate rulebase checked from the console (the script's live check, the form's check) is checked off
the engine that proves guards: a costly candidate spends its check's whole budget while every client's guarded
calls are still answered, and checks at once are bounded (the excess is refused at once, 429, never queued
behind the engine). Real Sentinel over HTTP, real SWI-Prolog; asserted on order, never on the clock."""

from __future__ import annotations

import asyncio

import pytest
from tests.console.console_rig import (
    OWNER_TOKEN, console_config, csrf_of, http_sentinel, mcp_client, signed_in,
)

from sentinel_mcp.policy.check_places import MAX_RUNNING
from sentinel_mcp.policy.checker import UNFINISHED

from tests.console.costly_checks import CANDIDATE, costly_bounds, live_check

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    """One gateway for the module (the same config for each test; each test's checks end before it does)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        costly_bounds(monkeypatch)
        cfg = console_config(tmp_path_factory.mktemp("check-isolation"))
        with http_sentinel(cfg) as (base, _):
            yield base


async def test_guarded_calls_are_answered_while_a_costly_candidate_is_checked(sentinel):
    base = sentinel
    async with (
        signed_in(base, OWNER_TOKEN) as owner,
        mcp_client(base, OWNER_TOKEN, mode="auto") as client,
    ):
        warm = await client.call_tool("bk__list_bookings", {"user_id": "u_123"})
        assert not warm.is_error, warm
        csrf = csrf_of(await owner.page("/console/policy"))
        order: list[str] = []

        async def check():
            r = await live_check(owner, base, csrf)
            order.append("check")
            return r

        running = asyncio.create_task(check())
        await asyncio.sleep(1.5)  # a head start: the check is under way (no assertion on the clock)
        for _ in range(3):
            r = await client.call_tool("bk__list_bookings", {"user_id": "u_123"})
            assert not r.is_error, r
            order.append("call")
        r = await running
        assert r.status_code == 200, r.text[:500]
        # the candidate is costly: its check ran out of its budget and says so (never "fine")
        assert any(UNFINISHED in p["message"] for p in r.json()["problems"]), r.json()
        assert order == ["call", "call", "call", "check"], order


async def test_concurrent_live_checks_are_bounded(sentinel):
    base = sentinel  # its checks costly (costly_bounds): those started below still run when the form's comes
    async with signed_in(base, OWNER_TOKEN) as owner:
        csrf = csrf_of(await owner.page("/console/policy"))
        answers = await asyncio.gather(*(live_check(owner, base, csrf) for _ in range(MAX_RUNNING + 4)))
        statuses = [r.status_code for r in answers]
        # one principal holds one place at most (check_places): its other checks are refused at once
        assert statuses.count(200) <= 1 and statuses.count(429) >= MAX_RUNNING + 3, statuses
        assert set(statuses) <= {200, 429}, statuses
        for r in answers:
            if r.status_code == 429:
                assert "running already" in r.json()["error"], r.text[:300]
        # the form's check (no script) is refused the same way while the slots are taken
        busy = [asyncio.create_task(live_check(owner, base, csrf)) for _ in range(MAX_RUNNING)]
        # the slots are taken: each of them but the check holding the owner's place is refused at once
        while sum(t.done() for t in busy) < MAX_RUNNING - 1:
            await asyncio.wait(busy, return_when=asyncio.FIRST_COMPLETED, timeout=0.1)
        assert all(t.result().status_code == 429 for t in busy if t.done()), [t for t in busy if t.done()]
        assert not all(t.done() for t in busy)
        r = await owner.post("/console/policy/check", {"file": "bookings.pl", "candidate": CANDIDATE},
                             csrf=csrf)
        assert r.status_code == 429 and "running already" in r.text, r.text[:500]
        # the policy page's own check of the files in force was remembered from its first view (the same
        # files, tools and documents): shown while the slots are taken, no place needed
        page = await owner.page("/console/policy")
        assert "could not finish checking" not in page and "running already" not in page, page[-3000:]
        await asyncio.gather(*busy)
        # once they are done, a check runs again
        r = await live_check(owner, base, csrf)
        assert r.status_code == 200, r.text[:300]
