"""``sentinel_answer`` writes only a fact an askable covers, judged by that askable. It looked the askable up
by the predicate's name alone: the agent could write a fact of the predicate that no askable's head covers
(``approved(big, X)`` beside ``askable(approved(small, X), ...)``), which a proof then takes as a plain stored
fact, whoever gave it (``base_facts.pl`` base_solve/3), or answer one askable's fact under another's type and
provenance (a text where the askable covering it offers choices, an agent's answer where only the user's
counts). Real SWI-Prolog and fact store."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall
from sentinel_mcp.policy.policy_service import PolicyService
from sentinel_mcp.policy.questions import AnswerRefused

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

RULEBASE = """
askable(approved(small, X), "Approve the small purchase ~w?", yes_no, [from([user, agent])]).
guard('shop__buy_small', [item = X], approved(small, X)).
guard('shop__buy_big', [item = X], approved(big, X)).

askable(label(note, X, L), "A note for ~w?", text, [from([user, agent])]).
askable(label(colour, X, C), "Which colour for ~w?", choice([red, green]), [from([user, agent])]).
askable(label(owner, X, O), "Who owns ~w?", text, [from([user])]).
guard('shop__paint', [item = X], ( label(colour, X, C), C \\== red )).
guard('shop__give', [item = X], label(owner, X, me)).
"""


def call(tool: str, item: str) -> ToolCall:
    return ToolCall(name=f"shop__{tool}", server="shop", tool=tool, arguments={"item": item}, session_id="s1",
                    principal="owner", destructive=True)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("covered")
    pl = tmp / "shop.pl"
    pl.write_text(RULEBASE)
    g = await make_guard(None, tmp / "facts.db", files=[pl], seeds={})
    yield g
    await g.close()


@pytest.mark.parametrize(
    "predicate, inputs, answer",
    [
        ("approved", ["big", "yacht"], "yes"),  # no askable covers approved(big, _)
        ("approved", ["huge", "yacht"], "yes"),
        ("label", ["colour", "car", "blue"], None),  # wrong arity for the choice: answered as a text's
        ("label", ["owner", "car"], "me"),  # the user's alone
        ("label", ["else", "car"], "me"),  # no askable covers it
    ],
)
async def test_the_agent_writes_no_fact_an_askable_does_not_cover(
    guard: Any, predicate: str, inputs: list[Any], answer: Any
) -> None:
    svc = PolicyService(guard)
    if answer is None:
        inputs, answer = inputs[:2], inputs[2]
    before = {f.fact for f in await guard.store.valid("s1")}
    with pytest.raises(AnswerRefused):
        await svc.answer("s1", predicate, inputs, answer)
    assert {f.fact for f in await guard.store.valid("s1")} == before


async def test_what_the_agent_may_not_write_gives_no_call(guard: Any) -> None:
    svc = PolicyService(guard)
    for args in (["big", "jet"], ["big", "approved"]):
        with pytest.raises(AnswerRefused):
            await svc.answer("s1", "approved", args, "yes")
    assert isinstance(await guard.decide(call("buy_big", "jet")), Deny)
    with pytest.raises(AnswerRefused):
        await svc.answer("s1", "label", ["colour", "bike"], "blue")
    assert isinstance(await guard.decide(call("paint", "bike")), Ask)
    with pytest.raises(AnswerRefused):
        await svc.answer("s1", "label", ["owner", "bike"], "me")
    assert isinstance(await guard.decide(call("give", "bike")), Ask)


async def test_what_an_askable_covers_the_agent_still_answers(guard: Any) -> None:
    svc = PolicyService(guard)
    assert await svc.answer("s1", "approved", ["small", "pen"], "yes") == "approved(small,pen)"
    assert isinstance(await guard.decide(call("buy_small", "pen")), Allow)
    assert await svc.answer("s1", "label", ["colour", "car"], "green") == "label(colour,car,green)"
    assert isinstance(await guard.decide(call("paint", "car")), Allow)
    assert await svc.answer("s1", "label", ["note", "car"], "shiny") == "label(note,car,shiny)"
    q = (await guard.decide(call("give", "car"))).questions[0]  # the user's question stays the user's
    await guard.record_answer(call("give", "car"), q, Answer(action="accept", content={"answer": "me"},
                                                             provenance="user"))
    assert isinstance(await guard.decide(call("give", "car")), Allow)


TTLS = """
askable(pass_for(visitor, X, P), "The visitor pass for ~w?", text, [from([user]), ttl(session)]).
askable(pass_for(staff, X, P), "The staff pass for ~w?", text, [from([user]), ttl(60)]).
guard('door__open', [who = X], pass_for(staff, X, _)).
"""


async def test_an_answer_lives_as_long_as_its_own_askable_says(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Two askables of one name and arity, with their own times to live: the answer to the second lived as
    long as the first said (the session), found by name and arity alone."""
    tmp = tmp_path_factory.mktemp("ttls")
    (tmp / "door.pl").write_text(TTLS)
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "door.pl"], seeds={})
    try:
        c = ToolCall(name="door__open", server="door", tool="open", arguments={"who": "ann"}, session_id="s1",
                     principal="owner", destructive=True)
        q = (await g.decide(c)).questions[0]
        await g.record_answer(c, q, Answer(action="accept", content={"answer": "p1"}, provenance="user"))
        [fact] = [f for f in await g.store.valid("s1") if f.predicate == "pass_for"]
        assert fact.expires_at is not None and fact.expires_at - fact.established_at == pytest.approx(60)
    finally:
        await g.close()


async def test_inputs_too_large_for_a_fact_are_refused(guard: Any) -> None:
    with pytest.raises(AnswerRefused, match="larger than a fact"):
        await PolicyService(guard).answer("s1", "approved", ["small", "x" * 2_000_000], "yes")


async def test_over_mcp_the_tool_refuses_what_no_askable_covers(guard: Any, tmp_path_factory: Any) -> None:
    """The same through ``sentinel_answer`` as a real MCP client calls it (both protocol eras)."""
    from mcp import Client

    from sentinel_mcp.core.builtin import BuiltinContext
    from sentinel_mcp.core.call_meta import call_meta
    from sentinel_mcp.policy.own_tools import create_server

    server = create_server(BuiltinContext(name="sentinel", data_dir=tmp_path_factory.mktemp("own"),
                                          services={"guard": guard}))
    meta = call_meta("mcp", "test", "client")
    for mode in ("auto", "legacy"):
        async with Client(server, mode=mode) as c:
            args = {"predicate": "approved", "inputs": ["big", f"ship-{mode}"], "answer": "yes"}
            r = await c.call_tool("sentinel_answer", args, meta=meta)
            assert r.is_error and "no askable of approved covers" in r.content[0].text, r
            args = {"predicate": "approved", "inputs": ["small", f"cup-{mode}"], "answer": "yes"}
            r = await c.call_tool("sentinel_answer", args, meta=meta)
            assert not r.is_error, r
    big = ToolCall(name="shop__buy_big", server="shop", tool="buy_big", arguments={"item": "ship-auto"},
                   session_id="mcp", principal="owner", destructive=True)
    assert isinstance(await guard.decide(big), Deny)


NUMBERS = """
askable(passes(X, N), "How many passes for ~w?", number, [from([user, agent])]).
"""


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
async def test_a_number_that_is_no_json_number_is_no_answer(tmp_path_factory: Any, value: float) -> None:
    tmp = tmp_path_factory.mktemp("numbers")
    (tmp / "n.pl").write_text(NUMBERS)
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "n.pl"], seeds={})
    try:
        with pytest.raises(AnswerRefused, match="not a JSON number"):
            await PolicyService(g).answer("s1", "passes", ["x"], value)
        assert not [f for f in await g.store.valid("s1") if f.predicate == "passes"]
        assert await PolicyService(g).answer("s1", "passes", ["x"], 3.0) == "passes(x,3)"
    finally:
        await g.close()
