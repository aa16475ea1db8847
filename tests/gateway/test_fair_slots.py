"""``max_in_flight`` slots shared by principals (``gateway/fair_slots.py``) and turns that go round by
principal (``gateway/party_turns.py``), on the objects themselves: who gets a freed slot or the next turn,
caps while several principals are present, a principal alone using every slot, cancellation leaving nothing
behind. Event order and counts only; through the gateway: tests/identity/test_shared_upstream_fair.py."""

from __future__ import annotations

import asyncio
import random

import pytest

from sentinel_mcp.gateway.fair_slots import FairSlots
from sentinel_mcp.gateway.party_turns import PartyTurns

pytestmark = pytest.mark.timeout(60)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_alone_a_principal_takes_every_slot() -> None:
    slots = FairSlots(4)
    assert all(slots.try_take("alice") for _ in range(4))
    assert not slots.try_take("alice")


@pytest.mark.parametrize("limit", [2, 3, 4, 7])
async def test_alone_a_principal_leaves_a_slot_when_another_may_come(limit: int) -> None:
    slots = FairSlots(limit, shared=True)
    assert all(slots.try_take("alice") for _ in range(limit - 1))
    assert not slots.try_take("alice")  # the last is held back ...
    got: list[str] = []

    async def wait(who: str) -> None:
        await slots.take(who)
        got.append(who)

    hers = [asyncio.ensure_future(wait("alice")) for _ in range(3)]
    await _settle()
    assert got == []  # ... from her waiting calls too
    assert slots.try_take("bob")  # bob's at once, her calls still running: nothing had to end
    assert not slots.try_take("bob") and got == []
    slots.give_back("bob")
    await _settle()
    assert got == []  # alone again: the slot is held back again
    slots.give_back("alice")
    await _settle()
    assert got == ["alice"]  # hers, within her limit - 1
    for t in hers:
        t.cancel()
    await asyncio.gather(*hers, return_exceptions=True)


async def test_one_slot_cannot_be_held_back() -> None:
    slots = FairSlots(1, shared=True)
    assert slots.try_take("alice") and not slots.try_take("bob")


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 7])
async def test_a_freed_slot_goes_to_the_principal_holding_fewest(limit: int) -> None:
    slots = FairSlots(limit)
    for _ in range(limit):
        assert slots.try_take("alice")
    got: list[str] = []

    async def wait(who: str) -> None:
        await slots.take(who)
        got.append(who)

    tasks = [asyncio.ensure_future(wait("alice")) for _ in range(3)]
    await _settle()
    tasks.append(asyncio.ensure_future(wait("bob")))  # arrives last
    await _settle()
    assert not slots.try_take("bob") and got == []
    slots.give_back("alice")
    await _settle()
    assert got == ["bob"], got  # before her three earlier waiters
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_while_two_are_present_each_holds_at_most_its_share() -> None:
    slots = FairSlots(4)
    assert slots.try_take("bob")
    assert slots.try_take("alice") and slots.try_take("alice")
    assert not slots.try_take("alice")  # her share is 2 while bob holds one, though one slot is free
    assert slots.try_take("bob")
    assert not slots.try_take("carol")  # all four taken
    slots.give_back("bob")
    slots.give_back("bob")
    assert slots.try_take("alice") and slots.try_take("alice")  # alone again: all of them


async def test_cancelled_waiters_leave_no_slot_behind() -> None:
    slots = FairSlots(2)
    assert slots.try_take("alice") and slots.try_take("alice")
    waiting = asyncio.ensure_future(slots.take("bob"))
    granted = asyncio.ensure_future(slots.take("carol"))
    await _settle()
    waiting.cancel()  # cancelled while waiting
    slots.give_back("alice")  # carol is granted ...
    granted.cancel()  # ... and cancelled before she ran: the slot comes back
    await asyncio.gather(waiting, granted, return_exceptions=True)
    slots.give_back("alice")
    assert slots.try_take("dave") and slots.try_take("dave")  # both free, dave alone


@pytest.mark.parametrize("seed", range(6))
async def test_random_programs_never_pass_the_limit_and_end_empty(seed: int) -> None:
    rnd = random.Random(seed)
    limit = rnd.randint(1, 5)
    slots = FairSlots(limit, shared=rnd.random() < 0.5)
    inside: list[str] = []
    most = 0

    async def call(who: str) -> None:
        nonlocal most
        if not slots.try_take(who):
            try:
                await asyncio.wait_for(slots.take(who), rnd.choice([0.001, 0.01, 1.0]))
            except asyncio.TimeoutError:
                return
        inside.append(who)
        most = max(most, len(inside))
        try:
            for _ in range(rnd.randint(0, 4)):
                await asyncio.sleep(0)
        finally:
            inside.remove(who)
            slots.give_back(who)

    await asyncio.gather(*[call(rnd.choice("abc")) for _ in range(60)])
    assert most <= limit and inside == []
    assert not slots._granted_at  # what the round robin remembered goes with the principals
    # nothing left held (the last slot, held back from z alone when shared, is y's)
    assert all(slots.try_take("z") for _ in range(limit - 1)) and slots.try_take("y" if slots.shared else "z")


async def test_turns_go_round_by_principal() -> None:
    turns = PartyTurns()
    order: list[str] = []
    release = asyncio.Event()

    async def call(who: str, name: str) -> None:
        async with turns.turn(None, who):  # no party: one call at a time ("concurrent": false)
            order.append(name)
            await release.wait()

    first = asyncio.ensure_future(call("alice", "a0"))
    await _settle()
    rest = [asyncio.ensure_future(call("alice", f"a{i}")) for i in (1, 2, 3)]
    await _settle()
    rest += [asyncio.ensure_future(call("bob", "b1")), asyncio.ensure_future(call("carol", "c1"))]
    await _settle()
    release.set()
    await asyncio.gather(first, *rest)
    # after each call, the first waiter of another principal than the one that ran (FIFO: a0..a3, b1, c1)
    assert order == ["a0", "b1", "a1", "c1", "a2", "a3"], order
