"""The user's answer wins over the agent's. A question open to both (``from([user, agent])``) took its first
answer and refused every later, different one: the agent's answer, given while the user's form was open,
then held over what the user said. The rule (``answer_facts.keep_answer``):

- the user's answer replaces every answer the agent gave to the same question (a value, a no, a "don't
  know"), whatever it said and through whatever context;
- the agent's answer never replaces the user's: the same word changes nothing (the user's stays as given),
  another word is refused;
- between two answers of one giver the first holds (two forms, or two agent calls, that raced).

And "I don't know" is a typed answer: the form's checkbox of a text or number question, or the explicit option
of a choice or yes/no question; a text that reads ``i_dont_know`` is a text. Real SWI-Prolog and fact store.
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_asyncio
from tests.policy.policy_rig import make_guard

from sentinel_mcp.console.answer_form import read_answer
from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall
from sentinel_mcp.policy.policy_service import PolicyService
from sentinel_mcp.policy.questions import DONT_KNOW, DONT_KNOW_FIELD, AnswerRefused

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

RULEBASE = """
context(focus).
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

# tool, predicate, a word that lets the call go, a word that refuses it
CASES = [
    ("wipe", "really_wipe", "yes", "no"),
    ("sell", "wipe_reason", "sold", "broken"),
    ("note", "wipe_note", "fine", "none"),
    ("count", "wipe_count", 3, 0),
]
_n = iter(range(10_000))


def call(tool: str, item: str) -> ToolCall:
    return ToolCall(name=f"shop__{tool}", server="shop", tool=tool, arguments={"item": item}, session_id="s1",
                    principal="owner", destructive=True)


def user_says(question: Any, value: Any) -> Answer:
    if DONT_KNOW_FIELD in question.requested_schema["properties"]:
        content = {"answer": value}
    else:
        content = {"answer": str(value)}
    return Answer(action="accept", content=content, provenance="user")


def user_dont_know(question: Any) -> Answer:
    props = question.requested_schema["properties"]
    content = {DONT_KNOW_FIELD: True} if DONT_KNOW_FIELD in props else {"answer": DONT_KNOW}
    return Answer(action="accept", content=content, provenance="user")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("user_wins")
    (tmp / "shop.pl").write_text(RULEBASE)
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "shop.pl"], seeds={})
    yield g
    await g.close()


async def asked(guard: Any, c: ToolCall) -> Any:
    d = await guard.decide(c)
    assert isinstance(d, Ask), d
    return d.questions[0]


async def answers_of(guard: Any, predicate: str, item: str) -> list[Any]:
    """Every held answer to the question about ``item``: its value, no or "don't know"."""
    return [f for f in await guard.store.valid("s1")
            if (f.predicate == predicate and f.args[0] == item)
            or (f.predicate in ("$answered_no", "$dont_know") and f.args == [predicate, [item]])]


@pytest.mark.parametrize("tool, predicate, go, stop", CASES)
@pytest.mark.parametrize("agent_first", ["go", "stop", "dont_know"])
@pytest.mark.parametrize("user_then", ["go", "stop", "dont_know"])
async def test_the_users_answer_replaces_the_agents(
    guard: Any, tool: str, predicate: str, go: Any, stop: Any, agent_first: str, user_then: str
) -> None:
    item = f"{tool}-{next(_n)}"
    c = call(tool, item)
    q = await asked(guard, c)  # the user's form is open
    svc = PolicyService(guard)
    if agent_first == "dont_know":
        if tool not in ("wipe", "sell"):
            pytest.skip("the agent says \"I don't know\" only through a choice's option")
        await svc.answer("s1", predicate, [item], DONT_KNOW)
    else:
        await svc.answer("s1", predicate, [item], go if agent_first == "go" else stop)
    ans = user_dont_know(q) if user_then == "dont_know" else user_says(q, go if user_then == "go" else stop)
    await guard.record_answer(c, q, ans)
    held = await answers_of(guard, predicate, item)
    assert [f.provenance for f in held] == ["user"], held
    d = await guard.decide(c)
    assert isinstance(d, Allow if user_then == "go" else Deny), d
    # the agent does not take it back: another word is refused, the same one changes nothing
    with pytest.raises(AnswerRefused, match="already answered"):
        await svc.answer("s1", predicate, [item], stop if user_then == "go" else go)
    same = {"go": go, "stop": stop}.get(user_then)
    if same is not None:
        await svc.answer("s1", predicate, [item], same)
    assert [f.provenance for f in await answers_of(guard, predicate, item)] == ["user"]
    assert isinstance(await guard.decide(c), Allow if user_then == "go" else Deny)


@pytest.mark.parametrize("tool, predicate, go, stop", CASES)
async def test_the_user_first_holds_over_the_agent(
    guard: Any, tool: str, predicate: str, go: Any, stop: Any
) -> None:
    item = f"{tool}-{next(_n)}"
    c = call(tool, item)
    q = await asked(guard, c)
    await guard.record_answer(c, q, user_says(q, stop))
    svc = PolicyService(guard)
    for word in (go, DONT_KNOW) if tool in ("wipe", "sell") else (go,):
        with pytest.raises(AnswerRefused, match="already answered"):
            await svc.answer("s1", predicate, [item], word)
    await svc.answer("s1", predicate, [item], stop)
    assert [f.provenance for f in await answers_of(guard, predicate, item)] == ["user"]
    assert isinstance(await guard.decide(c), Deny)
    # a second form of the user's with another word: the first form's word holds (the forms raced)
    with pytest.raises(AnswerRefused, match="already answered"):
        await guard.record_answer(c, q, user_says(q, go))


@pytest.mark.parametrize("tool, predicate, go, stop", CASES)
async def test_the_users_answer_replaces_one_given_through_a_context(
    guard: Any, tool: str, predicate: str, go: Any, stop: Any
) -> None:
    """The agent's answer through a context is replaced as any other; rebinding the context afterwards
    leaves the user's answer (it was not given through the context)."""
    item = f"{tool}-{next(_n)}"
    c = call(tool, item)
    q = await asked(guard, c)
    svc = PolicyService(guard)
    await svc.bind("s1", "focus", item)
    await svc.answer("s1", predicate, ["focus"], go)
    await guard.record_answer(c, q, user_says(q, stop))
    await svc.bind("s1", "focus", "elsewhere")
    [held] = await answers_of(guard, predicate, item)
    assert held.provenance == "user" and held.contexts == [], held
    assert isinstance(await guard.decide(c), Deny)


TYPED = ["i_dont_know", "I don't know", "I_DONT_KNOW", " i_dont_know", "i_dont_know\u200b", "$dont_know",
         "dont_know"]


@pytest.mark.parametrize("typed", TYPED)
async def test_a_typed_text_is_a_text_not_dont_know(guard: Any, typed: str) -> None:
    """A user typing ``i_dont_know`` into a text question gave that text: it is stored as the note, never
    as "I don't know" (which the rulebase reads as ``none`` here and refuses the call)."""
    item = f"typed-{next(_n)}"
    c = call("note", item)
    q = await asked(guard, c)
    await guard.record_answer(c, q, Answer(action="accept", content={"answer": typed, DONT_KNOW_FIELD: False},
                                           provenance="user"))
    [held] = await answers_of(guard, "wipe_note", item)
    assert held.predicate == "wipe_note" and held.args == [item, typed], held
    assert isinstance(await guard.decide(c), Allow)


@pytest.mark.parametrize("typed", TYPED[:3])
async def test_the_console_form_reads_a_typed_text_as_a_text(guard: Any, typed: str) -> None:
    item = f"console-{next(_n)}"
    c = call("note", item)
    q = await asked(guard, c)
    answer, problem = read_answer(0, q, {"q0.answer": typed}, approve=True)
    assert problem is None and answer is not None
    await guard.record_answer(c, q, answer)
    [held] = await answers_of(guard, "wipe_note", item)
    assert held.args == [item, typed], held
    # and its checkbox is the "don't know"
    item2 = f"console-{next(_n)}"
    c2 = call("note", item2)
    q2 = await asked(guard, c2)
    answer, problem = read_answer(0, q2, {f"q0.{DONT_KNOW_FIELD}": "on"}, approve=True)
    assert problem is None and answer is not None
    await guard.record_answer(c2, q2, answer)
    [held] = await answers_of(guard, "wipe_note", item2)
    assert held.predicate == "$dont_know", held


async def test_the_agent_typing_i_dont_know_gives_a_text(guard: Any) -> None:
    item = f"agent-typed-{next(_n)}"
    assert await PolicyService(guard).answer("s1", "wipe_note", [item], DONT_KNOW) == \
        f"wipe_note('{item}',i_dont_know)"
    assert isinstance(await guard.decide(call("note", item)), Allow)


USER_ONLY = """
askable(really_sell(X), "Really sell ~w?", yes_no, [from([user])]).
askable(sell_note(X, N), "A note for ~w?", text, [from([user])]).
guard('shop__sell', [item = X], ( really_sell(X), sell_note(X, N), N \\== no )).
"""


async def test_the_users_answer_replaces_an_agents_the_question_no_longer_takes(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """An agent's answer held from when the askable took it (the rulebase since says ``from([user])``) is
    no answer any more, and does not stand in the user's way: the user's different word replaces it. A read's
    fact is no one's answer, and stays (``test_dont_know_held.py``)."""
    tmp = tmp_path_factory.mktemp("user_only")
    (tmp / "shop.pl").write_text(USER_ONLY)
    g = await make_guard(None, tmp / "facts.db", files=[tmp / "shop.pl"], seeds={})
    try:
        await g.knowledge.ensure("s1", g.rulebases.current)
        k = g.knowledge
        await k.add([await k.new_fact("s1", "$answered_no", ["really_sell", ["lamp"]], "agent"),
                     await k.new_fact("s1", "sell_note", ["lamp", "no"], "agent")])
        sell = call("sell", "lamp")
        for _ in range(2):
            q = await asked(g, sell)
            await g.record_answer(sell, q, user_says(q, "yes"))
        assert isinstance(await g.decide(sell), Allow)
        assert sorted((f.fact, f.provenance) for f in await g.store.valid("s1")) == [
            ("really_sell(lamp)", "user"), ("sell_note(lamp,yes)", "user")]
    finally:
        await g.close()


@pytest.mark.parametrize("inputs", [[None], [{"a": 1}], [["x"]], [float("nan")], [float("inf")], ["a\ud800"]])
async def test_inputs_are_plain_values_in_process_too(guard: Any, inputs: list[Any]) -> None:
    """``sentinel_answer``'s schema takes strings, numbers and booleans; called in process (past it), an
    input of another kind was written into the fact (``null``, ``nan``, ``json([a=1])``, a garbled text)."""
    with pytest.raises(AnswerRefused, match="an input must be"):
        await PolicyService(guard).answer("s1", "wipe_note", inputs, "fine")


@pytest.mark.parametrize("giver", ["user", "agent"])
async def test_a_text_that_is_no_unicode_is_no_answer(guard: Any, giver: str) -> None:
    item = f"surrogate-{next(_n)}"
    c = call("note", item)
    q = await asked(guard, c)
    bad = "fine\ud800"
    with pytest.raises(AnswerRefused, match="not Unicode text"):
        if giver == "user":
            await guard.record_answer(c, q, user_says(q, bad))
        else:
            await PolicyService(guard).answer("s1", "wipe_note", [item], bad)
    assert await answers_of(guard, "wipe_note", item) == []
