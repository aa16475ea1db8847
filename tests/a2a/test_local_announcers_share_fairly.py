"""Several agents on one machine (a developer's laptop, all heard on loopback) share that machine's card
fetch rate, and one chatty announcer no longer takes all of it: each (machine, port) has a smaller burst of
its own and refills slower than the machine, so a quiet agent's fetch finds the machine's allowance free. The
machine's own bound stands however many ports announce (``test_announcement_fetch_bounds.py``)."""

from __future__ import annotations

from sentinel_mcp.a2a.card_fetch_budget import BURST, FIRST_WAIT, PORT_BURST, CardFetchBudget

CHATTY, QUIET = "http://127.0.0.1:7001", "http://127.0.0.1:7002"


def test_a_chatty_local_announcer_leaves_room_for_a_quiet_one() -> None:
    now = [0.0]
    budget = CardFetchBudget(clock=lambda: now[0])
    served, quiet_waits = 0, []
    for step in range(20):  # each step: the chatty one asks first and takes what it may, then the quiet one
        for i in range(BURST):
            name = f"chatty-{step}-{i}"
            if budget.wait(name, CHATTY) == 0:
                budget.took(name, CHATTY)
                served += 1
        quiet_waits.append(budget.wait(f"quiet-{step}", QUIET))
        now[0] += FIRST_WAIT
    assert quiet_waits[0] == 0  # at once, in the chatty one's first burst
    assert all(wait == 0 for wait in quiet_waits)  # (it never took: asked again each step, found room)
    assert PORT_BURST < served < 20  # the chatty one still has a rate, a fraction of the machine's


def test_the_quiet_ones_take_turns_within_the_machines_rate() -> None:
    now = [0.0]
    budget = CardFetchBudget(clock=lambda: now[0])
    taken = 0
    for step in range(10):  # many ports, each asking each step: together no more than the machine's rate
        for port in range(7100, 7140):
            endpoint, name = f"http://127.0.0.1:{port}", f"n-{port}-{step}"
            if budget.wait(name, endpoint) == 0:
                budget.took(name, endpoint)
                taken += 1
        now[0] += FIRST_WAIT
    assert taken <= BURST + 10
