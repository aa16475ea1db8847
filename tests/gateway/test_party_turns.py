"""Turns at an upstream whose pushed questions name no call (``gateway/party_turns.py``): one party's calls
overlap, other parties wait, nobody starves, and a caller cancelled while waiting or just granted gives its
turn back."""

from __future__ import annotations

import asyncio
import random

import pytest

from sentinel_mcp.gateway.party_turns import PartyTurns

pytestmark = pytest.mark.timeout(60)


class Watch:
    """Who is inside, checked on every entry: one party's calls, or one call of no party."""

    def __init__(self) -> None:
        self.inside: list[object | None] = []
        self.most = 0
        self.order: list[str] = []

    def enter(self, party: object | None, name: str = "") -> None:
        self.inside.append(party)
        self.most = max(self.most, len(self.inside))
        self.order.append(name)
        if party is None:
            assert len(self.inside) == 1, f"a call of no party ran beside {len(self.inside) - 1} others"
        else:
            assert all(p is party for p in self.inside), "two parties' calls ran at once"

    def leave(self, party: object | None) -> None:
        self.inside.remove(party)


async def _call(
    turns: PartyTurns, watch: Watch, party: object | None, seconds: float, name: str = ""
) -> None:
    async with turns.turn(party):
        watch.enter(party, name)
        try:
            await asyncio.sleep(seconds)
        finally:
            watch.leave(party)


async def test_one_partys_calls_overlap() -> None:
    turns, watch, a = PartyTurns(), Watch(), object()
    await asyncio.gather(*(_call(turns, watch, a, 0.05) for _ in range(5)))
    assert watch.most == 5
    assert turns.running == 0


async def test_other_parties_and_no_party_wait() -> None:
    turns, watch = PartyTurns(), Watch()
    a, b = object(), object()
    calls = [_call(turns, watch, p, 0.02) for p in (a, b, None, a, None, b, a)]
    await asyncio.gather(*calls)
    assert turns.running == 0


async def test_a_waiting_party_is_not_overtaken() -> None:
    """While B waits, A's newcomers queue behind it: B goes next, then they do."""
    turns, watch = PartyTurns(), Watch()
    a, b = object(), object()
    first = asyncio.create_task(_call(turns, watch, a, 0.1, "a1"))
    await asyncio.sleep(0.01)
    waiting_b = asyncio.create_task(_call(turns, watch, b, 0.05, "b"))
    await asyncio.sleep(0.01)
    late_a = asyncio.create_task(_call(turns, watch, a, 0.01, "a2"))
    await asyncio.gather(first, waiting_b, late_a)
    assert watch.order == ["a1", "b", "a2"]


async def test_a_waiter_cancelled_leaves_no_turn_behind() -> None:
    turns, watch = PartyTurns(), Watch()
    a, b, c = object(), object(), object()
    first = asyncio.create_task(_call(turns, watch, a, 0.05))
    await asyncio.sleep(0.01)
    doomed = asyncio.create_task(_call(turns, watch, b, 0.05))
    after = asyncio.create_task(_call(turns, watch, c, 0.01, "c"))
    await asyncio.sleep(0.01)
    doomed.cancel()
    await asyncio.gather(first, after)
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert watch.order[-1] == "c" and turns.running == 0
    # and the turns go on
    await asyncio.wait_for(_call(turns, watch, b, 0.0), 1)


async def test_a_waiter_granted_then_cancelled_gives_its_turn_back() -> None:
    turns, watch = PartyTurns(), Watch()
    a, b = object(), object()
    entered = asyncio.Event()
    late: list[asyncio.Task[None]] = []

    async def holder() -> None:
        async with turns.turn(a):
            entered.set()
            await asyncio.sleep(0.02)
        late[0].cancel()  # its turn was given by the exit above; it has not run yet

    first = asyncio.create_task(holder())
    await entered.wait()
    late.append(asyncio.create_task(_call(turns, watch, b, 0.0, "b")))
    await first
    with pytest.raises(asyncio.CancelledError):
        await late[0]
    assert watch.order == [] and turns.running == 0
    await asyncio.wait_for(_call(turns, watch, a, 0.0), 1)


@pytest.mark.parametrize("seed", range(6))
async def test_random_programs_keep_the_rule_and_end_empty(seed: int) -> None:
    """Many callers of a few parties (and none), random lengths, some cancelled while waiting or running:
    the rule holds at every entry, every caller not cancelled finishes, and nothing is left held."""
    rng = random.Random(seed)
    turns, watch = PartyTurns(), Watch()
    parties: list[object | None] = [object(), object(), object(), None]
    tasks = []
    for _ in range(80):
        tasks.append(asyncio.create_task(_call(turns, watch, rng.choice(parties), rng.random() * 0.004)))
        if rng.random() < 0.3:
            await asyncio.sleep(rng.random() * 0.002)
        if rng.random() < 0.15:
            rng.choice(tasks).cancel()
    done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
    assert all(r is None or isinstance(r, asyncio.CancelledError) for r in done)
    assert turns.running == 0 and not watch.inside
    await asyncio.wait_for(_call(turns, watch, parties[0], 0.0), 1)  # still usable
