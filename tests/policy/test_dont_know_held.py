""""I don't know" is an answer like any other: while it holds, a second, different answer to the same question
(the agent's, through ``sentinel_answer``, or a stale form's) is refused. Else an agent's "yes" after the user
said "I don't know" was stored beside it, and a stored answer wins over a "don't know" in the proof
(``base_facts.pl`` askable_solve/4), so the call went ahead on the agent's word against the user's."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall
from sentinel_mcp.policy.policy_service import PolicyService
from sentinel_mcp.policy.questions import DONT_KNOW, DONT_KNOW_FIELD, AnswerRefused

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

# each "I don't know" reads as an answer that refuses the call (``unknown(as(V))``), so it is kept as the
# user's answer (a "don't know" that ends the call with a next step is forgotten: the next call asks again)
RULEBASE = """
askable(really_wipe(X), "Really wipe ~w?", yes_no, [from([user, agent]), unknown(as(no))]).
askable(wipe_reason(X, W), "Why wipe ~w?", choice([broken, sold, other]), [from([user, agent]),
        unknown(as(other))]).
askable(wipe_note(X, W), "A note for ~w?", text, [from([user, agent]), unknown(as(none))]).
askable(wipe_count(X, N), "How many passes for ~w?", number, [from([user, agent]), unknown(as(0))]).
guard('shop__wipe', [item = X], really_wipe(X)).
guard('shop__sell', [item = X], wipe_reason(X, sold)).
guard('shop__note', [item = X], ( wipe_note(X, N), N \\== none )).
guard('shop__count', [item = X], ( wipe_count(X, N), N > 0 )).
"""


def call(tool: str, item: str) -> ToolCall:
    return ToolCall(name=f"shop__{tool}", server="shop", tool=tool, arguments={"item": item}, session_id="s1",
                    principal="owner", destructive=True)


def dont_know(question: Any) -> Answer:
    """The form's "I don't know": the choice's option, or the checkbox of a text or number question."""
    props = question.requested_schema["properties"]
    content = {DONT_KNOW_FIELD: True} if DONT_KNOW_FIELD in props else {"answer": DONT_KNOW}
    return Answer(action="accept", content=content, provenance="user")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("dont_know")
    pl = tmp / "shop.pl"
    pl.write_text(RULEBASE)
    g = await make_guard(None, tmp / "facts.db", files=[pl], seeds={})
    yield g
    await g.close()


async def asked(guard: Any, c: ToolCall) -> Any:
    d = await guard.decide(c)
    assert isinstance(d, Ask), d
    return d.questions[0]


@pytest.mark.parametrize(
    "tool, predicate, agent_says",
    [("wipe", "really_wipe", "yes"), ("sell", "wipe_reason", "sold"), ("note", "wipe_note", "fine"),
     ("count", "wipe_count", 3)],
)
async def test_the_agent_does_not_answer_over_the_users_dont_know(
    guard: Any, tool: str, predicate: str, agent_says: Any
) -> None:
    item = f"disk-{tool}"
    c = call(tool, item)
    q = await asked(guard, c)
    await guard.record_answer(c, q, dont_know(q))
    assert isinstance(await guard.decide(c), Deny)  # the user's "don't know" refuses the call, and holds
    with pytest.raises(AnswerRefused, match="already answered"):
        await PolicyService(guard).answer("s1", predicate, [item], agent_says)
    assert isinstance(await guard.decide(c), Deny)
    await guard.record_answer(c, q, dont_know(q))  # the same answer again (a second form): nothing new
    assert isinstance(await guard.decide(c), Deny)


@pytest.mark.parametrize(
    "tool, predicate, agent_says",
    [("wipe", "really_wipe", "yes"), ("sell", "wipe_reason", "sold"), ("note", "wipe_note", "fine"),
     ("count", "wipe_count", 3)],
)
async def test_a_dont_know_does_not_stand_beside_an_answer(
    guard: Any, tool: str, predicate: str, agent_says: Any
) -> None:
    """The user's "don't know" after the agent's answer replaces it (the user's word wins,
    ``test_user_answer_wins.py``): never the two side by side, where the agent's value won in the proof."""
    item = f"tape-{tool}"
    c = call(tool, item)
    q = await asked(guard, c)  # the user's form is open
    await PolicyService(guard).answer("s1", predicate, [item], agent_says)
    assert isinstance(await guard.decide(c), Allow)
    await guard.record_answer(c, q, dont_know(q))
    held = [f for f in await guard.store.valid("s1") if (f.predicate == predicate and f.args[0] == item)
            or f.args == [predicate, [item]]]
    assert [(f.predicate, f.provenance) for f in held] == [("$dont_know", "user")], held
    assert isinstance(await guard.decide(c), Deny)


OTHERS = """
askable(keep_reason(X, W), "Why keep ~w?", choice([gift, spare, other]), [from([user, agent]),
        unknown(as(other))]).
askable(owner_id(U), "Your id?", text, [from([user]), unknown('Look your id up, then ask again.')]).
guard('shop__keep', [item = X], keep_reason(X, gift)).
guard('shop__whoami', [], owner_id(_)).
"""


async def test_a_dont_know_that_ends_a_call_forgets_only_its_own_question(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A "don't know" that ends its call with a next step is forgotten (the next call asks again): all of the
    conversation's "don't know" answers were, so the user's "don't know" to another question (which reads as
    ``other`` and holds) went too, and the agent could then answer that question over it."""
    tmp = tmp_path_factory.mktemp("others")
    (tmp / "shop.pl").write_text(OTHERS)
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "shop.pl"], seeds={})
    try:
        keep = call("keep", "vase")
        q = await asked(g, keep)
        await g.record_answer(keep, q, dont_know(q))
        assert isinstance(await g.decide(keep), Deny)  # "don't know" reads as other: held
        who = ToolCall(name="shop__whoami", server="shop", tool="whoami", arguments={}, session_id="s1",
                       principal="owner", destructive=True)
        q2 = await asked(g, who)
        await g.record_answer(who, q2, dont_know(q2))
        denied = await g.decide(who)
        assert isinstance(denied, Deny) and "Look your id up" in denied.reason
        await asked(g, who)  # the next call asks again
        with pytest.raises(AnswerRefused, match="already answered"):
            await PolicyService(g).answer("s1", "keep_reason", ["vase"], "gift")
        assert isinstance(await g.decide(keep), Deny)
    finally:
        await g.close()


FOCUSED = """
context(focus).
askable(really_sell(X), "Really sell ~w?", yes_no, [from([user, agent])]).
guard('shop__sell', [item = X], really_sell(X)).
"""


async def test_the_same_answer_again_leaves_the_first_as_it_was(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Saying again what is held changed nothing but its record: it took the second's provenance, time to
    live and contexts. The agent restated the user's "no" through a context, rebound the context (which
    deletes the answers given through it), and the user's "no" was gone: its "yes" then went through."""
    tmp = tmp_path_factory.mktemp("focused")
    (tmp / "shop.pl").write_text(FOCUSED)
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "shop.pl"], seeds={})
    try:
        svc = PolicyService(g)
        sell = call("sell", "piano")
        q = await asked(g, sell)
        await g.record_answer(sell, q, Answer(action="accept", content={"answer": "no"}, provenance="user"))
        await svc.bind("s1", "focus", "piano")
        await svc.answer("s1", "really_sell", ["focus"], "no")  # the same answer: nothing new
        [no] = [f for f in await g.store.valid("s1") if f.predicate == "$answered_no"]
        assert no.provenance == "user" and no.contexts == [], no
        await svc.bind("s1", "focus", "chair")
        with pytest.raises(AnswerRefused, match="already answered"):
            await svc.answer("s1", "really_sell", ["piano"], "yes")
        assert isinstance(await g.decide(sell), Deny)
    finally:
        await g.close()


async def test_the_users_same_word_replaces_one_the_question_does_not_take(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A fact of the same text held with a provenance the question does not take (read from a tool, for a
    question only the user answers) is no answer: the user's same word replaces it, and the call goes on."""
    tmp = tmp_path_factory.mktemp("observed")
    (tmp / "shop.pl").write_text(FOCUSED.replace("[from([user, agent])]", "[from([user])]"))
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "shop.pl"], seeds={})
    try:
        await g.knowledge.ensure("s1", g.rulebases.current)
        await g.knowledge.add([await g.knowledge.new_fact("s1", "really_sell", ["lamp"], "observed")])
        sell = call("sell", "lamp")
        q = await asked(g, sell)  # a read's word is not the user's
        await g.record_answer(sell, q, Answer(action="accept", content={"answer": "yes"}, provenance="user"))
        assert isinstance(await g.decide(sell), Allow)
    finally:
        await g.close()
