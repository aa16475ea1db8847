"""Local agents on one machine take the machine's card fetches in turn by port. An announcer on this machine
under 500 names (its card broken: each name costs a fetch) filled the browser's queue with names sleeping
their deferred fetch, and honest agents announced after it waited beyond the queue, forgotten before their
turn (only its per-port rate bounded it, never the order). Now a deferred name gives its place back and waits
its turn (``card_fetch_turns.py``): the machine's next fetch goes to the next port waiting, so each honest
agent on a port of its own is fetched within a round of the ports, and the names waiting are bounded. Real
zeroconf listener (announcements heard from loopback), cards served over real HTTP on 127.0.0.1 and counted
there; the budget's clock is the test's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from tests.a2a.card_server import serving_card
from tests.a2a.lan_announcer import HERE, Rig, announced, lan_rig, service
from tests.a2a.test_card_signatures import card_at

from sentinel_mcp.a2a.card_fetch_budget import FIRST_WAIT, CardFetchBudget
from sentinel_mcp.a2a.card_fetch_turns import MAX_QUEUED, PER_PORT, FetchTurns
from sentinel_mcp.a2a.discovery import MAX_PENDING

pytestmark = pytest.mark.timeout(180)
ATTACKER, HONEST = "http://127.0.0.1:7001", ["http://127.0.0.1:7002", "http://127.0.0.1:7003"]


@pytest.fixture
async def clocked() -> AsyncIterator[tuple[Rig, list[float]]]:
    now = [0.0]
    async for r in lan_rig(fetches=CardFetchBudget(clock=lambda: now[0])):
        yield r, now


def hear_all(rig: Rig, infos: list[Any]) -> None:
    """Each announcement whole (pointer, service, text, address), in as many packets as it takes."""
    from zeroconf import DNSOutgoing
    from zeroconf.const import _FLAGS_AA, _FLAGS_QR_RESPONSE

    for start in range(0, len(infos), 4):
        out = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
        for info in infos[start:start + 4]:
            for record in (*service(info), *info.dns_addresses()):
                out.add_answer_at_time(record, 0)
        for datagram in out.packets():
            rig.hear(datagram, HERE)


async def test_honest_agents_are_fetched_in_turn_beside_a_port_announcing_500_names(
        clocked: tuple[Rig, list[float]]) -> None:
    rig, now = clocked
    browser = rig.browser
    assert browser is not None
    fetched: list[str] = []

    def hostile(port: int) -> bytes:
        fetched.append("attacker")
        return b"not a card"

    def honest(label: str) -> Any:
        def card(port: int) -> dict[str, Any]:
            fetched.append(label)
            return card_at(port, label)
        return card

    async with serving_card(hostile) as bad, serving_card(honest("one")) as one, \
            serving_card(honest("two")) as two:
        flood = [announced(bad) for _ in range(500)]
        hear_all(rig, flood)
        for _ in range(400):  # (a count: the flood is taken in, its allowance spent, the rest deferred)
            if browser.deferred and fetched:
                break
            await asyncio.sleep(0.02)
        assert browser.deferred and fetched
        agents = [announced(one), announced(two)]
        hear_all(rig, agents)
        before = len(fetched)
        for step in range(60):  # each step the machine's rate gives one more fetch
            if all(a.name in rig.registry.peers for a in agents):
                break
            for _ in range(20):
                await asyncio.sleep(0.02)
            now[0] += FIRST_WAIT
        assert all(a.name in rig.registry.peers for a in agents), (step, fetched[before:], browser.pending)
        # within a round of the ports waiting: the attacker's port took at most one turn before each
        assert fetched[before:].count("attacker") <= 2, fetched[before:]
        assert len(browser.deferred) <= PER_PORT  # the attacker's names waiting: its port's share


def test_a_machines_fetches_go_to_its_ports_in_turn() -> None:
    now = [0.0]
    budget = CardFetchBudget(clock=lambda: now[0], burst=1000, total_burst=1000)  # the order alone counts
    turns = FetchTurns(budget)
    for i in range(500):
        turns.add(f"attacker-{i}", ATTACKER, None)
    assert turns.at(ATTACKER) == PER_PORT and len(turns) == PER_PORT  # bounded: its oldest kept
    for i, endpoint in enumerate(HONEST):
        assert turns.add(f"honest-{i}", endpoint, None)
    served = []
    for _ in range(6):  # each fetch made, and its check ended, before the next turn
        got = turns.next()
        assert isinstance(got, tuple)
        served.append(got[0])
        endpoint = HONEST[int(got[0][-1])] if got[0].startswith("honest") else ATTACKER
        assert not turns.waits_turn(got[0], endpoint) and turns.waits_turn("newcomer", endpoint)
        budget.took(got[0], endpoint)
        turns.done(got[0])
    assert set(served[:3]) == {"attacker-0", "honest-0", "honest-1"}  # one round of the ports
    assert served[3:] == ["attacker-1", "attacker-2", "attacker-3"]  # (then only its port waits)


def test_the_names_waiting_are_bounded_however_many_ports() -> None:
    turns = FetchTurns(CardFetchBudget(clock=lambda: 0.0))
    for port in range(8000, 8000 + 300):
        for i in range(3):
            turns.add(f"n-{port}-{i}", f"http://127.0.0.1:{port}", None)
    assert len(turns) <= MAX_QUEUED
    # an agent on a machine of its own is kept (that machine's share first); on the flood's machine, ports are
    # all alike: a newcomer's turn is the last (test_of_a_machines_equal_ports_...)
    assert turns.add("honest", "http://192.0.2.7:9000", None)
    assert "honest" in turns and len(turns) <= MAX_QUEUED


def test_a_turn_not_used_in_time_passes_on() -> None:
    now = [0.0]
    budget = CardFetchBudget(clock=lambda: now[0], burst=1000, total_burst=1000)
    turns = FetchTurns(budget)
    turns.add("gone", HONEST[0], None)
    turns.add("next", HONEST[1], None)
    got = turns.next()
    assert isinstance(got, tuple) and got[0] == "gone"
    assert not isinstance(turns.next(), tuple)  # the machine's turn is held
    now[0] += 31.0  # its check never came back (GRANT_FOR)
    got = turns.next()
    assert isinstance(got, tuple) and got[0] == "next"


def _serve(turns: FetchTurns, budget: CardFetchBudget) -> str:
    """The next turn taken, its fetch made and its check ended."""
    got = turns.next()
    assert isinstance(got, tuple), got
    endpoint = str(got[1])  # (these tests' checks: the endpoint)
    budget.took(got[0], endpoint)
    turns.done(got[0])
    return str(got[0])


def test_an_agent_queued_in_a_flood_of_one_name_ports_is_served_within_a_bounded_number_of_turns() -> None:
    # the flood's every name on a port of its own (the fullest port was the first of equals: the name whose
    # turn came next was pushed out, the honest agent with it before its turn came)
    budget = CardFetchBudget(clock=lambda: 0.0, burst=10**6, total_burst=10**6)
    turns = FetchTurns(budget)
    port = iter(range(10000, 60000))
    for _ in range(MAX_QUEUED + 50):
        p = next(port)
        turns.add(f"flood-{p}", f"http://127.0.0.1:{p}", f"http://127.0.0.1:{p}")
    for _ in range(2):  # two turns taken: its place
        _serve(turns, budget)
    assert turns.add("honest", "http://127.0.0.1:9000", "http://127.0.0.1:9000")
    for turn in range(MAX_QUEUED + 1):  # each turn the flood names two more ports
        for _ in range(2):
            p = next(port)
            turns.add(f"flood-{p}", f"http://127.0.0.1:{p}", f"http://127.0.0.1:{p}")
        assert "honest" in turns, f"pushed out before its turn, turn {turn}"
        if _serve(turns, budget) == "honest":
            break
    else:
        raise AssertionError("the agent was never served")
    assert turn < MAX_QUEUED


def test_an_agent_on_a_machine_of_its_own_is_not_pushed_out_by_another_machines_flood() -> None:
    budget = CardFetchBudget(clock=lambda: 0.0, burst=10**6, total_burst=10**6)
    turns = FetchTurns(budget)
    attacker = ("http://192.0.2.66:{}").format
    for p in range(MAX_QUEUED):
        turns.add(f"flood-{p}", attacker(10000 + p), attacker(10000 + p))
    assert turns.add("honest", "http://192.0.2.7:8000", "http://192.0.2.7:8000")  # its machine's one name
    served = []
    for p in range(MAX_QUEUED, MAX_QUEUED + 80, 2):  # the flood goes on: two ports more a turn
        for q in (p, p + 1):
            turns.add(f"flood-{q}", attacker(10000 + q), attacker(10000 + q))
        assert "honest" in turns or "honest" in served, served
        served.append(_serve(turns, budget))
    assert "honest" in served[:2], served  # within a round of the machines waiting


def test_of_a_machines_equal_ports_the_one_whose_turn_comes_last_gives_up_its_name() -> None:
    turns = FetchTurns(CardFetchBudget(clock=lambda: 0.0))
    for p in range(MAX_QUEUED):
        turns.add(f"n-{p}", f"http://127.0.0.1:{10000 + p}", None)
    assert not turns.add("newest", "http://127.0.0.1:9999", None)  # a flood's newcomer: its turn is last
    assert "n-0" in turns and len(turns) == MAX_QUEUED  # the next to be served stays


async def test_a_name_whose_turn_came_is_checked_while_the_queue_is_held_by_slow_checks() -> None:
    # its check waited for a resolving slot behind the queue's (a flood's cards trickled to their deadline):
    # its machine's turn held meanwhile, and spent (GRANT_FOR) before its check began
    now = [0.0]
    budget = CardFetchBudget(clock=lambda: now[0], burst=1)
    async for rig in lan_rig(fetches=budget):
        browser = rig.browser
        assert browser is not None
        async with serving_card(lambda port: card_at(port, "agent")) as port:
            budget.took("another", f"http://127.0.0.1:{port + 1}")  # this machine's rate spent meanwhile
            agent = announced(port)
            hear_all(rig, [agent])
            for _ in range(200):
                if agent.name in browser.deferred:
                    break
                await asyncio.sleep(0.02)
            assert agent.name in browser.deferred, rig.registry.rejected
            held = asyncio.Event()

            async def slow(name: str) -> None:
                await held.wait()

            for i in range(MAX_PENDING):  # the queue's every place taken by a check that does not end
                browser._queue(f"slow-{i}", slow)  # type: ignore[arg-type]
            now[0] += FIRST_WAIT  # the machine's next fetch: the agent's turn
            for _ in range(300):  # (the turns are looked at each TURN_TICK)
                if agent.name in rig.registry.peers:
                    break
                await asyncio.sleep(0.02)
            listed = agent.name in rig.registry.peers
            held.set()
            assert listed, (browser.deferred, len(browser.pending))
