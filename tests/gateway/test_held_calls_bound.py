"""Held calls (``gateway/held_calls.py``) one principal leaves behind are bounded by count. A held call's
outcome waits for the client's next round; a round that ends before it collects (the client cancelled its
request, or went away) left the outcome in the table for the whole hold timeout. The calls *running* are
bounded by the per-principal calls-in-flight cap (``catalog_view``), the finished ones were not: a client
calling a quick tool and cancelling each call kept one entry (and its result) per call for ``confirm_ttl``.
Now each principal keeps at most ``MAX_DONE_PER_PRINCIPAL`` uncollected outcomes, its own oldest dropped
first, never another principal's. Also: a cancelled round no longer leaves a reader on the call's queue that
swallowed the call's next question (nobody was shown it, and the upstream waited for the timeout)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult

from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.gateway import held_calls
from sentinel_mcp.gateway.held_calls import HeldCalls, PendingQuestion

pytestmark = pytest.mark.timeout(120)


async def quick(_link: Any) -> str:
    return "x" * 1000


def owned_by(held: HeldCalls, who: str) -> list[str]:
    return [c.id for c in held.calls.values() if c.owner == who]


@pytest.mark.parametrize("flood", [held_calls.MAX_DONE_PER_PRINCIPAL + 1, 2000])
async def test_a_principals_uncollected_held_calls_are_bounded_by_count(flood):
    held = HeldCalls(timeout=300)
    alices = held.start("tb__echo", "a1", quick, owner="alice")
    await alices.task
    calls = [held.start("tb__echo", f"b{n}", quick, owner="bob") for n in range(flood)]
    await asyncio.gather(*(c.task for c in calls))
    await asyncio.sleep(0)  # the done callbacks
    mine = owned_by(held, "bob")
    assert len(mine) == held_calls.MAX_DONE_PER_PRINCIPAL
    assert mine == [c.id for c in calls[-held_calls.MAX_DONE_PER_PRINCIPAL:]]  # its own oldest went
    assert alices.id in held.calls  # never another's
    assert await held.next_event(alices) == "x" * 1000


async def test_running_held_calls_are_not_dropped_by_the_bound():
    """Only finished outcomes count: a call still running (its place among the calls in flight) stays."""
    held = HeldCalls(timeout=300)
    release = asyncio.Event()

    async def slow(_link: Any) -> str:
        await release.wait()
        return "slow"

    running = held.start("tb__slow", "s", slow, owner="bob")
    calls = [held.start("tb__echo", f"b{n}", quick, owner="bob") for n in range(500)]
    await asyncio.gather(*(c.task for c in calls))
    await asyncio.sleep(0)
    assert running.id in held.calls
    assert len(owned_by(held, "bob")) == held_calls.MAX_DONE_PER_PRINCIPAL + 1
    release.set()
    assert await held.next_event(running) == "slow"


async def test_a_cancelled_round_leaves_no_reader_that_takes_the_next_question():
    held = HeldCalls(timeout=300)
    asked = asyncio.Event()
    question: list[PendingQuestion] = []

    async def asks_later(_link: Any) -> str:
        await asked.wait()
        return "done"

    call = held.start("tb__ask", "s", asks_later, owner="alice")
    round_one = asyncio.ensure_future(held.next_event(call))
    await asyncio.sleep(0)
    round_one.cancel()  # the client cancelled the round
    with pytest.raises(asyncio.CancelledError):
        await round_one
    q = PendingQuestion("upstream.held.1", ElicitRequest(params=ElicitRequestFormParams(
        message="sure?", requested_schema={"type": "object", "properties": {}})),
        asyncio.get_running_loop().create_future())
    question.append(q)
    await call.questions.put(q)
    for _ in range(5):
        await asyncio.sleep(0)
    assert call.questions.qsize() == 1  # still there for the next round
    assert await held.next_event(call) is q
    assert held.answer(call, ElicitResult(action="cancel"))
    asked.set()
    assert await held.next_event(call) == "done"


def test_a_held_call_has_no_default_owner():
    """The owner is required, keyword-only: a caller that forgot it shared one bucket ("" owned every such
    call) with every other caller that forgot it, and their bound dropped each other's outcomes."""
    import inspect

    owner = inspect.signature(HeldCalls.start).parameters["owner"]
    assert owner.kind is inspect.Parameter.KEYWORD_ONLY
    assert owner.default is inspect.Parameter.empty


@pytest.mark.parametrize("owner", ["", None, 0, b"alice", ["alice"]])
async def test_a_held_call_with_no_owner_is_refused(owner):
    held = HeldCalls(timeout=300)
    with pytest.raises(GatewayError):
        held.start("tb__echo", "s", quick, owner=owner)
    assert not held.calls
    await asyncio.sleep(0)


async def test_forgetting_the_owner_is_a_type_error():
    held = HeldCalls(timeout=300)
    with pytest.raises(TypeError):
        held.start("tb__echo", "s", quick)  # type: ignore[call-arg]
    assert not held.calls
