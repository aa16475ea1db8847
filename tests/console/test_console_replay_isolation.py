"""A what-if replay from the console decides recorded calls off the engine that proves guards: a candidate
whose guard spends long in builtins (a format/3 repeat count is one inference, so the budget in force does not
stop it) replays while every client's guarded calls are still answered; a replay takes a check place (the
excess is refused at once, 429); a replay that could not finish says so, never a partial report as complete.
Real Sentinel over HTTP, real SWI-Prolog; asserted on order, never on the clock."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from tests.console.console_rig import (
    OWNER_TOKEN, console_config, csrf_of, http_sentinel, mcp_client, signed_in,
)
from tests.identity.identity_rig import BOOKINGS_PL, text

from sentinel_mcp.policy.check_places import MAX_RUNNING

pytestmark = pytest.mark.timeout(300)


def _costly(rounds: int = 1000000) -> str:
    """A guard of the recorded reads whose proof sorts a list of a million ``rounds`` times: a handful of
    inferences each, so the budget in force does not stop it; the guard's time budget does, each decision
    after its whole budget."""
    return (
        "\ncostly :- forall(between(1, " + str(rounds) + ", _), "
        "(length(L, 1000000), sort(0, @>=, L, _))).\n"
        "guard('bk__list_bookings', [user_id = _], costly).\n"
    )


USERS = ("u_123", "u_124", "u_125")
CALLS = 3 * len(USERS) * 4  # a few calls for each costly decision of the replay
# the guard's time budget (10 s by default): the replay decides each recorded read under the candidate to its
# end, so this is what the replay lasts, several times what the calls made meanwhile take
GUARD_SECONDS = 5


def _config(tmp_path):  # type: ignore[no-untyped-def]
    """The console rig with a guard's time budget of GUARD_SECONDS: each costly decision of the replay runs
    to it (the rulebase in force decides the calls below in a small part of it)."""
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["policy"] = {**body["sentinel"].get("policy", {}), "guard_timeout": GUARD_SECONDS}
    cfg.write_text(json.dumps(body))
    return cfg


async def _whatif(owner, base: str, csrf: str, rounds: int = 1000000):
    return await owner.http.post(
        f"{base}/console/policy/whatif",
        data={"csrf": csrf, "file": "bookings.pl", "candidate": BOOKINGS_PL.read_text() + _costly(rounds)},
        headers={"origin": base},
    )


def _report(text: str) -> str:
    return re.sub(r"\s+", " ", text[text.index('id="whatif-report"') :])


async def test_guarded_calls_are_answered_and_a_check_place_held_while_a_costly_candidate_is_replayed(
    tmp_path,
):
    """One replay, two things asserted while it runs (one gateway: the replay is most of the time): every
    client's guarded calls are answered off its engine, and it holds its principal's check place (each
    check the owner sends meanwhile is refused at once, 429)."""
    cfg = _config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with (
            signed_in(base, OWNER_TOKEN) as owner,
            mcp_client(base, OWNER_TOKEN, mode="auto") as client,
        ):
            for user in USERS:  # recorded calls, each costly to decide under the candidate
                warm = await client.call_tool("bk__list_bookings", {"user_id": user})
                assert not warm.is_error, warm
            csrf = csrf_of(await owner.page("/console/policy"))
            order: list[str] = []

            async def whatif():
                r = await _whatif(owner, base, csrf)
                order.append("replay")
                return r

            running = asyncio.create_task(whatif())
            await asyncio.sleep(3)  # a head start: the replay is under way (no assertion on the clock)
            # calls one after another until the replay ends: on the engine the replay holds, each waited
            # behind one of its decisions (a guard's whole time budget); off it, none waits for the replay
            while not running.done() and len(order) < CALLS:
                r = await client.call_tool("bk__cancel_booking", {"booking_id": "b_someone_elses"})
                # decided by the guard in force (its look-up made, its rule unmet), not timed out
                assert r.is_error and "not a booking of the current user" in text(r), r
                order.append("call")
            assert order == ["call"] * CALLS, order  # the replay still under way, its decisions in progress
            checks = await asyncio.gather(*(
                owner.http.post(
                    f"{base}/console/policy/check",
                    data={"csrf": csrf, "file": "bookings.pl", "candidate": BOOKINGS_PL.read_text()
                          + _costly()},
                    headers={"origin": base, "x-console-live": "check"},
                )
                for _ in range(MAX_RUNNING)
            ))
            statuses = [c.status_code for c in checks]
            # the owner's one place is its replay's (a principal holds at most one, check_places): each of
            # MAX_RUNNING checks sent at once is refused. (At least one refused, as this said before, held
            # also with the replay outside any place: two checks of one principal at once refuse one.)
            assert statuses == [429] * MAX_RUNNING, statuses
            r = await running
            assert r.status_code == 200, r.text[:500]
            report = _report(r.text)
            assert "does not load" not in report and "could not finish" not in report, report[:3000]
            # replayed whole: each read's proof ran out of the guard's time and denies under the candidate
            assert re.search(r"3 recorded call\(s\) replayed", report), report[:3000]
            assert re.search(r'id="change-count">3<', report), report[:3000]
            assert order == ["call"] * CALLS + ["replay"], order
