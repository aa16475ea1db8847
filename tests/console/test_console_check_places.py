"""Fair check places through the console, over real HTTP on 127.0.0.1 with real SWI-Prolog: one principal can
never hold both check places (its second check is refused at once, 429, while its first runs), and another
principal's check still runs meanwhile (a reader's policy page shows its rulebase checked, not "busy");
readers together never take the owner's place. The warm check child serves one check only and never
outlives the gateway. Asserted on answers and order, never on the clock."""

from __future__ import annotations

import asyncio
import html
import json
import os
import signal
from pathlib import Path

import pytest
from tests.console.console_rig import (
    ALICE, BOB, OWNER_TOKEN, console_config, csrf_of, http_sentinel, signed_in,
)
from tests.identity.identity_rig import BOOKINGS_PL

from sentinel_mcp.policy.check_places import KEPT, OWN_BUSY

from tests.console.costly_checks import CANDIDATE, costly_bounds, live_check

pytestmark = pytest.mark.timeout(240)


async def test_a_principal_cannot_take_both_places_and_another_still_checks(tmp_path, monkeypatch):
    costly_bounds(monkeypatch)
    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner, signed_in(base, BOB) as bob:
            # the CSRF token from the inbox: no policy page is shown before, nothing of it is remembered
            csrf = csrf_of(await owner.page("/console/inbox"))
            first = asyncio.create_task(live_check(owner, base, csrf))
            await asyncio.sleep(1.5)  # a head start: the owner's costly check holds its place
            second, page = await asyncio.gather(live_check(owner, base, csrf), bob.page("/console/policy"))
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



async def test_readers_reloading_the_policy_page_never_take_the_owners_place(tmp_path, monkeypatch):
    """The rulebase in force costly to check: one reader's page holds the readers' place for the check's whole
    budget; another reader's page is told its rulebase was not checked, and the owner's live check runs."""
    costly_bounds(monkeypatch)
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    costly = tmp_path / "bookings.pl"
    costly.write_text(CANDIDATE)
    body["sentinel"]["rulebases"] = [body["sentinel"]["rulebases"][0], str(costly)]
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _):
        async with (
            signed_in(base, OWNER_TOKEN) as owner,
            signed_in(base, BOB) as bob,
            signed_in(base, ALICE) as alice,
        ):
            csrf = csrf_of(await owner.page("/console/inbox"))  # no policy page yet: nothing remembered
            first = asyncio.create_task(bob.page("/console/policy"))
            await asyncio.sleep(1.5)  # a head start: the reader's check of the rules in force holds its place
            # the second reader first: sent together, the owner's check could take its place before her page
            # asked, and her page read "2 checks are running already" (right, but not the case meant here)
            page = await alice.page("/console/policy")
            mine = await live_check(owner, base, csrf)
            assert "could not finish checking" in page and html.escape(KEPT) in page, page[-3000:]
            assert mine.status_code == 200, mine.text[:500]
            assert "error" not in mine.json(), mine.text[:500]
            shown = await first  # the first reader's page: its check ran (to its budget's end)
            assert html.escape(KEPT) not in shown and "running already" not in shown, shown[-3000:]


def _spares_of(pid: int) -> set[int]:
    """The gateway's check children (``python -m sentinel_mcp.policy.check_child``) now."""
    out = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"sentinel_mcp.policy.check_child" in cmdline:
            out.add(int(entry.name))
    return out


async def _one_spare(pid: int, not_this: int | None = None) -> int:
    for _ in range(600):
        spares = _spares_of(pid) - {not_this}
        if spares:
            [spare] = spares  # never more than one waiting
            return spare
        await asyncio.sleep(0.05)
    raise AssertionError("no warm check child was started")


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("end", [signal.SIGTERM, signal.SIGKILL])
async def test_the_warm_check_child_serves_one_check_and_ends_with_the_gateway(tmp_path, end):
    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, gateway):
        async with signed_in(base, OWNER_TOKEN) as owner:
            csrf = csrf_of(await owner.page("/console/policy"))  # the page readies a warm check child
            spare = await _one_spare(gateway.pid)
            r = await owner.post("/console/policy/check", {"file": "bookings.pl",
                                                           "candidate": BOOKINGS_PL.read_text()}, csrf=csrf)
            assert r.status_code == 200 and "could not finish checking" not in r.text, r.text[-2000:]
            for _ in range(600):  # it served that check and ended: never a second request
                if _gone(spare):
                    break
                await asyncio.sleep(0.05)
            assert _gone(spare)
            fresh = await _one_spare(gateway.pid, not_this=spare)
            os.kill(gateway.pid, end)  # a gateway stopped, or killed outright
            gateway.wait(30)
            for _ in range(600):  # its spare goes with it: killed with its group, or at its stdin's end
                if _gone(fresh):
                    break
                await asyncio.sleep(0.05)
            assert _gone(fresh)


def _waiting_for_request(pid: int) -> bool:
    """Warm: blocked reading its stdin (its request), SWI-Prolog's threads started."""
    try:
        return "pipe" in Path(f"/proc/{pid}/wchan").read_text() and len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


@pytest.mark.parametrize("when", ["starting", "warm"])
async def test_a_check_after_the_warm_child_was_killed_runs_in_a_fresh_one(tmp_path, when):
    """The warm child killed (the OOM killer, a signal) before a check takes it, while it still starts or
    once it waits for its request: the check runs in a child started for it and answers, never "could not
    finish"."""
    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, gateway):
        async with signed_in(base, OWNER_TOKEN) as owner:
            csrf = csrf_of(await owner.page("/console/policy"))  # the page readies a warm check child
            spare = await _one_spare(gateway.pid)
            for _ in range(1200 if when == "warm" else 0):
                if _waiting_for_request(spare):
                    break
                await asyncio.sleep(0.05)
            else:
                assert when == "starting", "the warm child never came to wait for its request"
            os.killpg(spare, signal.SIGKILL)
            for _ in range(600):
                if _gone(spare):
                    break
                await asyncio.sleep(0.01)
            candidate = BOOKINGS_PL.read_text() + "guard('bk__x', [], (\\+ fail)).\n"
            r = await owner.post("/console/policy/check", {"file": "bookings.pl", "candidate": candidate},
                                 csrf=csrf)
            assert r.status_code == 200 and "could not finish" not in r.text, r.text[-2000:]
            assert "bk__x" in r.text, r.text[-2000:]  # a real check's finding about the candidate
