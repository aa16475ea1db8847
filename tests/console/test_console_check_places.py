"""Fair check places through the console, over real HTTP on 127.0.0.1 with real SWI-Prolog: one principal can
never hold both check places (its second check is refused at once, 429, while its first runs), and another
principal's check still runs meanwhile (a reader's policy page shows its rulebase checked, not "busy").
Asserted on answers and order, never on the clock."""

from __future__ import annotations

import asyncio

import pytest
from tests.console.console_rig import BOB, OWNER_TOKEN, console_config, csrf_of, http_sentinel, signed_in
from tests.identity.identity_rig import BOOKINGS_PL

from sentinel_mcp.policy.check_places import OWN_BUSY

pytestmark = pytest.mark.timeout(240)


def _costly(guards: int = 60, width: int = 40, depth: int = 7) -> str:
    """Many guards, each calling a rule whose walk branches width**depth ways: the check spends its budget."""
    out = "".join(f"guard('bk__t{i}', [order = O], p0(O)).\n" for i in range(guards))
    for level in range(depth):
        out += f"p{level}(X) :- " + ", ".join([f"p{level + 1}(X)"] * width) + ".\n"
    return out + f"p{depth}(X) :- X \\== a.\n"


CANDIDATE = BOOKINGS_PL.read_text() + _costly()


async def _live_check(who, base: str, csrf: str):
    return await who.http.post(
        f"{base}/console/policy/check",
        data={"csrf": csrf, "file": "bookings.pl", "candidate": CANDIDATE},
        headers={"origin": base, "x-console-live": "check"},
    )


async def test_a_principal_cannot_take_both_places_and_another_still_checks(tmp_path):
    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner, signed_in(base, BOB) as bob:
            # the CSRF token from the inbox: no policy page is shown before, nothing of it is remembered
            csrf = csrf_of(await owner.page("/console/inbox"))
            first = asyncio.create_task(_live_check(owner, base, csrf))
            await asyncio.sleep(1.5)  # a head start: the owner's costly check holds its place
            second, page = await asyncio.gather(_live_check(owner, base, csrf), bob.page("/console/policy"))
            # the owner's second check is refused at once while its first runs: never both places
            assert second.status_code == 429, second.text[:500]
            assert second.json()["error"] == OWN_BUSY, second.text[:500]
            assert not first.done()
            # the reader's page checked the rulebase in force on the place still free
            assert "could not finish checking" not in page and "running already" not in page, page[-3000:]
            r = await first
            assert r.status_code == 200, r.text[:500]
            # its place given back, the owner checks again
            ordinary = {"file": "bookings.pl", "candidate": BOOKINGS_PL.read_text()}
            again = await owner.post("/console/policy/check", ordinary, csrf=csrf)
            assert again.status_code == 200, again.text[:500]
