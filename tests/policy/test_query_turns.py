"""One principal's heavy queries do not starve another's: the query worker serves principals in turn (round
robin, each principal's waiting queries bounded). Measured in turns, not time: how many of the heavy
principal's queries the worker answers before the other principal's one (first come, first served, it
was all twelve of them)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from tests.policy.policy_rig import BOOKINGS_PL

from sentinel_mcp.policy.query_turns import QueryTurns
from sentinel_mcp.policy.query_worker import QueryWorker

pytestmark = pytest.mark.timeout(120)

HEAVY = "between(1, 40000, X), X < 0"  # fails after a long search, within the inference limit
LIGHT = "X = 1"


async def ask(w: QueryWorker, principal: str, goal: str) -> dict[str, Any]:
    async def dump() -> str:
        return ""

    return await w.query(rb_module="rb_turns", rb_version="v1", rb_files=[str(BOOKINGS_PL)],
                         session_module=f"{principal}_s", generation=0, dump_session=dump, now=time.time(),
                         goal=goal, principal=principal)


async def heavy_before_light(w: QueryWorker, flood: int) -> tuple[int, list[dict[str, Any]]]:
    """``flood`` heavy queries of alice put first (all waiting at once), then bob's light one: how many of
    alice's were answered before bob's, and every answer alice got."""
    answered: list[str] = []

    async def one(principal: str, goal: str) -> dict[str, Any]:
        out = await ask(w, principal, goal)
        if out["status"] != "refused":  # refused at once, without a turn
            answered.append(principal)
        return out

    await ask(w, "warm", LIGHT)  # the worker started
    alice = [asyncio.create_task(one("alice", HEAVY)) for _ in range(flood)]
    bob = asyncio.create_task(one("bob", LIGHT))
    assert (await bob)["status"] == "proved"
    before = answered.index("bob")
    return before, list(await asyncio.gather(*alice))


async def test_a_flood_of_heavy_queries_does_not_starve_another_principal() -> None:
    w = QueryWorker()
    try:
        before, alice = await heavy_before_light(w, 12)
    finally:
        await w.close()
    # round robin: only the one of alice's running when bob asked
    assert before == 1, f"{before} of alice's queries were answered before bob's"
    assert all(a["status"] in ("failed", "refused") for a in alice)


async def test_a_principal_s_waiting_queries_are_bounded() -> None:
    w = QueryWorker(per_principal=4)
    try:
        _, alice = await heavy_before_light(w, 12)
    finally:
        await w.close()
    refused = [a for a in alice if a["status"] == "refused"]
    assert [a["status"] for a in alice if a not in refused] == ["failed"] * 5  # one running, four waiting
    assert all("waiting" in a["message"] for a in refused)


async def _hold(turns: QueryTurns, who: str, order: list[str], gate: asyncio.Event | None = None) -> None:
    async with turns.turn(who):
        order.append(who)
        if gate is not None:
            await gate.wait()


async def test_turns_rotate_between_principals_in_order() -> None:
    turns, order, gate = QueryTurns(per_principal=10), [], asyncio.Event()
    first = asyncio.create_task(_hold(turns, "a", order, gate))
    await asyncio.sleep(0)
    rest = [asyncio.create_task(_hold(turns, w, order)) for w in ["a", "a", "a", "b", "c", "b"]]
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(first, *rest)
    assert order == ["a", "b", "c", "a", "b", "a", "a"]
    assert turns.waiting("a") == 0 and not turns._busy


async def test_a_cancelled_waiter_never_holds_the_worker() -> None:
    turns, order, gate = QueryTurns(), [], asyncio.Event()
    first = asyncio.create_task(_hold(turns, "a", order, gate))
    await asyncio.sleep(0)
    gone = asyncio.create_task(_hold(turns, "b", order))
    after = asyncio.create_task(_hold(turns, "c", order))
    await asyncio.sleep(0)
    gone.cancel()  # cancelled while waiting
    gate.set()
    await first
    await after
    assert order == ["a", "c"] and turns.waiting("b") == 0 and not turns._busy
    # handed the turn and cancelled before it ran: the turn goes on to the next
    gate2 = asyncio.Event()
    first = asyncio.create_task(_hold(turns, "a", order, gate2))
    await asyncio.sleep(0)
    handed = asyncio.create_task(_hold(turns, "b", order))
    last = asyncio.create_task(_hold(turns, "c", order))
    await asyncio.sleep(0)
    gate2.set()
    await asyncio.sleep(0)  # a ran to its end and handed b the turn; b has not run yet
    assert first.done() and not handed.done()
    handed.cancel()
    await last
    assert order[-2:] == ["a", "c"] and not turns._busy and handed.cancelled()


# How many goals one principal may have waiting is sentinel.policy.query_waiting_per_principal: an integer
# (never a text, a boolean or a float), from 1 to 256, named when it is not.
def test_the_guard_s_worker_takes_its_waiting_bound_from_the_config(tmp_path) -> None:  # noqa: ANN001
    from sentinel_mcp.config import parse_config
    from sentinel_mcp.policy.guard import PolicyGuard

    cfg = parse_config({"sentinel": {"policy": {"query_waiting_per_principal": 3}}}, source="cfg.json")
    guard = PolicyGuard([], None, store_path=tmp_path / "facts.db", settings=cfg.sentinel.policy)
    assert guard.queries.per_principal == 3
    default = PolicyGuard([], None, store_path=tmp_path / "facts2.db")
    assert default.queries.per_principal == 8


@pytest.mark.parametrize("value", ["4", True, 4.0, 0, -1, 10**9, None, [4]])
def test_a_bad_waiting_bound_is_refused_naming_its_key(value: Any) -> None:
    from sentinel_mcp.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as err:
        parse_config({"sentinel": {"policy": {"query_waiting_per_principal": value}}}, source="cfg.json")
    text = str(err.value)
    assert "sentinel.policy.query_waiting_per_principal" in text and "unknown key" not in text, text
